//! `hermes pairing list|approve|revoke|clear-pending`: who may talk to the
//! bot on messaging platforms, with the reference's output. A failed
//! approval exits 1 with its reason on stderr (the reference exits 0, which
//! scripts cannot tell from success).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_gateway::messaging::pairing::{Approval, Approver, PairingStore};
use hermes_session::Setup;

/// `hermes pairing` arguments.
#[derive(Debug, Args)]
pub struct PairingArgs {
    #[command(subcommand)]
    action: Option<PairingAction>,
}

#[derive(Debug, Subcommand)]
enum PairingAction {
    /// Pending codes and approved users.
    List,
    /// Let the user who was given CODE talk to the bot.
    Approve {
        /// telegram, discord or slack.
        platform: String,
        /// The code the bot sent them.
        code: String,
    },
    /// Take an approved user's access away.
    Revoke {
        /// telegram, discord or slack.
        platform: String,
        /// Their platform user id.
        user_id: String,
    },
    /// Drop every pending code.
    ClearPending,
}

/// Runs a `hermes pairing` action.
pub fn run(args: PairingArgs, setup: &Setup) -> Result<ExitCode> {
    let docs = hermes_session::stores::documents(setup).map_err(anyhow::Error::msg)?;
    let store = PairingStore::with_documents(docs);
    let mut out = std::io::stdout().lock();
    let Some(action) = args.action else {
        writeln!(
            out,
            "Usage: hermes pairing {{list|approve|revoke|clear-pending}}"
        )?;
        writeln!(out, "Run 'hermes pairing --help' for details.")?;
        return Ok(ExitCode::SUCCESS);
    };
    match action {
        PairingAction::List => list(&store, &mut out)?,
        PairingAction::Approve { platform, code } => return approve(&store, &platform, &code),
        PairingAction::Revoke { platform, user_id } => {
            let platform = platform.trim().to_lowercase();
            if store.revoke(&platform, &user_id)? {
                writeln!(
                    out,
                    "\n  Revoked access for user {user_id} on {platform}.\n"
                )?;
            } else {
                writeln!(
                    out,
                    "\n  User {user_id} not found in approved list for {platform}.\n"
                )?;
            }
        }
        PairingAction::ClearPending => match store.clear_pending()? {
            0 => writeln!(out, "\n  No pending requests to clear.\n")?,
            n => writeln!(out, "\n  Cleared {n} pending pairing request(s).\n")?,
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// `hermes pairing approve`: the approval on stdout, a failure on stderr with exit 1.
fn approve(store: &PairingStore, platform: &str, code: &str) -> Result<ExitCode> {
    let platform = platform.trim().to_lowercase();
    let code = code.trim().to_uppercase();
    let approval = store.approve(&platform, &code, Approver::Owner)?;
    if let Approval::Approved { user_id, user_name } = approval {
        let who = if user_name.is_empty() {
            format!("User {user_id}")
        } else {
            format!("User {user_name} ({user_id})")
        };
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "\n  Approved! {who} on {platform} can now use the bot~"
        )?;
        writeln!(
            out,
            "  They'll be recognized automatically on their next message.\n"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut err = std::io::stderr().lock();
    if let Approval::LockedOut(left) = approval {
        writeln!(
            err,
            "\n  Locked out of '{platform}' after too many failed approval attempts; try again in ~{} minute(s).\n",
            (left as u64) / 60
        )?;
    } else {
        writeln!(
            err,
            "\n  Code '{code}' not found or expired for platform '{platform}'."
        )?;
        writeln!(err, "  Run 'hermes pairing list' to see pending codes.\n")?;
    }
    Ok(ExitCode::FAILURE)
}

fn list(store: &PairingStore, out: &mut impl Write) -> Result<()> {
    let pending = store.pending();
    let approved = store.approved();
    if pending.is_empty() && approved.is_empty() {
        writeln!(out, "No pairing data found. No one has tried to pair yet~")?;
        return Ok(());
    }
    if pending.is_empty() {
        writeln!(out, "\n  No pending pairing requests.")?;
    } else {
        writeln!(out, "\n  Pending Pairing Requests ({}):", pending.len())?;
        writeln!(
            out,
            "  {:<12} {:<10} {:<20} {:<20} Age",
            "Platform", "Code", "User ID", "Name"
        )?;
        writeln!(
            out,
            "  {:<12} {:<10} {:<20} {:<20} ---",
            "--------", "----", "-------", "----"
        )?;
        for p in &pending {
            writeln!(
                out,
                "  {:<12} {:<10} {:<20} {:<20} {}m ago",
                p.platform, p.code_hint, p.user_id, p.user_name, p.age_minutes
            )?;
        }
    }
    if approved.is_empty() {
        writeln!(out, "\n  No approved users.")?;
    } else {
        writeln!(out, "\n  Approved Users ({}):", approved.len())?;
        writeln!(out, "  {:<12} {:<20} {:<20}", "Platform", "User ID", "Name")?;
        writeln!(out, "  {:<12} {:<20} {:<20}", "--------", "-------", "----")?;
        for a in &approved {
            writeln!(
                out,
                "  {:<12} {:<20} {:<20}",
                a.platform, a.user_id, a.user_name
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}
