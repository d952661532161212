//! MD5, only for the bundled-skills manifest, whose hashes must match the
//! reference's (the `md-5` crate; MD5 is no security measure here).

use ::md5::Digest as _;

/// An incremental MD5 hasher.
#[derive(Debug, Clone, Default)]
pub struct Md5(::md5::Md5);

impl Md5 {
    /// Feeds bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The digest as lowercase hex.
    pub fn hex(self) -> String {
        hex::encode(self.0.finalize())
    }
}
