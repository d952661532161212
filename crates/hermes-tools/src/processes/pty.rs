//! Pseudo-terminals for `terminal(pty=true)`: the child gets the slave side
//! as stdin, stdout and stderr (so `isatty()` holds and interactive programs
//! prompt and echo), the table reads and writes the master. The reference
//! spawns through `ptyprocess` with `dimensions=(30, 120)`
//! (`tools/process_registry.py`, `spawn_local`); so do we.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::process::Stdio;

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::pty::{Winsize, openpty};
use nix::sys::termios::{OutputFlags, SetArg, tcgetattr, tcsetattr};

/// Rows of the terminal a program started with `pty=true` sees.
pub const ROWS: u16 = 30;
/// Columns of that terminal.
pub const COLUMNS: u16 = 120;
/// The end-of-file character of a terminal in canonical mode (Ctrl-D).
pub const EOF: u8 = 0x04;

/// A fresh pseudo-terminal pair.
pub struct Pair {
    /// The side the table reads output from and writes input to.
    pub master: File,
    /// The side the child gets as its standard streams.
    pub slave: OwnedFd,
}

/// Opens a pseudo-terminal of [`ROWS`] × [`COLUMNS`].
pub fn open() -> Result<Pair, String> {
    let size = Winsize {
        ws_row: ROWS,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pair = openpty(&size, None).map_err(|e| format!("openpty: {e}"))?;
    // openpty's descriptors survive exec: other children spawned meanwhile
    // would hold the slave open and hide the end of output from the reader.
    for fd in [&pair.master, &pair.slave] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(|e| format!("fcntl: {e}"))?;
    }
    // Output keeps plain `\n` line ends, as with a pipe; the terminal would
    // otherwise turn every one into `\r\n`.
    let mut modes = tcgetattr(&pair.slave).map_err(|e| format!("tcgetattr: {e}"))?;
    modes.output_flags.remove(OutputFlags::ONLCR);
    tcsetattr(&pair.slave, SetArg::TCSANOW, &modes).map_err(|e| format!("tcsetattr: {e}"))?;
    Ok(Pair {
        master: File::from(pair.master),
        slave: pair.slave,
    })
}

/// The three standard streams on `slave`.
pub fn streams(slave: &OwnedFd) -> Result<[Stdio; 3], String> {
    let dup = || {
        slave
            .try_clone()
            .map(Stdio::from)
            .map_err(|e| format!("dup: {e}"))
    };
    Ok([dup()?, dup()?, dup()?])
}
