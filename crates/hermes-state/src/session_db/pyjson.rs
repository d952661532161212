//! JSON text shaped like Python's `json.dumps` defaults (`", "` / `": "` separators, non-ASCII
//! escaped as `\uXXXX`), so JSON columns we write are byte-identical to the reference's and the
//! FTS index sees the same tokens.

use std::io;

use serde::Serialize;

use super::error::DbError;

struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if fragment.is_ascii() {
            return w.write_all(fragment.as_bytes());
        }
        let mut units = [0u16; 2];
        for ch in fragment.chars() {
            if ch.is_ascii() {
                w.write_all(&[ch as u8])?;
            } else {
                for unit in ch.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// Serialises `value` the way Python's `json.dumps(value)` would.
pub fn dumps<T: Serialize + ?Sized>(value: &T, what: &'static str) -> Result<String, DbError> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    value.serialize(&mut ser).map_err(|e| DbError::Encode {
        what,
        message: e.to_string(),
    })?;
    String::from_utf8(out).map_err(|e| DbError::Encode {
        what,
        message: e.to_string(),
    })
}

#[cfg(test)]
#[path = "pyjson_tests.rs"]
mod tests;
