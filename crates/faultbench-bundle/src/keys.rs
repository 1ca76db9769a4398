//! Ed25519 keys in plain files: `faultbench keygen --out DIR` writes `bundle.key` (the 32-byte
//! secret seed as 64 hex digits, mode 0600) and `bundle.pub` (the public key, 64 hex digits).
//! Signing and checking are ed25519-dalek's; this module only reads and writes the files.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let (secret, public) = faultbench_bundle::keygen(dir.path()).unwrap();
//! let sk = faultbench_bundle::SecretKey::read(&secret).unwrap();
//! let pk = faultbench_bundle::PublicKey::read(&public).unwrap();
//! let sig = sk.sign(b"numbers");
//! assert!(pk.verify(b"numbers", &sig).is_ok());
//! assert!(pk.verify(b"other numbers", &sig).is_err());
//! ```

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use faultbench_core::output::{OutputDir, OutputError};
use std::path::{Path, PathBuf};

/// File name of the secret key written by [`keygen`].
pub const SECRET_FILE: &str = "bundle.key";
/// File name of the public key written by [`keygen`].
pub const PUBLIC_FILE: &str = "bundle.pub";

/// Largest key file read (a key is 64 hex digits and a newline; comments are not expected).
const MAX_KEY_FILE: u64 = 4096;

/// A key that could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file cannot be read.
    #[error("{}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The key file does not hold a key.
    #[error("{}: not a faultbench Ed25519 key ({reason}); expected 64 hex digits, as `faultbench keygen` writes", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A key file exists already (keygen never overwrites a secret key).
    #[error("{}: already exists; keygen never replaces a key (choose another --out, or move the old keys away)", .0.display())]
    Exists(PathBuf),
    /// The keys could not be written.
    #[error(transparent)]
    Write(#[from] OutputError),
    /// The operating system's generator failed.
    #[error("cannot draw random bytes for a key: {0}")]
    Random(String),
    /// A signature is not valid under this key.
    #[error("the signature does not match this public key")]
    BadSignature,
}

/// A secret (signing) key.
pub struct SecretKey(SigningKey);

/// A public (verifying) key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

/// Parses 64 hex digits (surrounding whitespace allowed) into 32 bytes.
fn parse_hex32(text: &str) -> Result<[u8; 32], String> {
    let t = text.trim();
    if t.len() != 64 {
        return Err(format!("{} characters", t.chars().count().min(9999)));
    }
    let mut out = [0u8; 32];
    for (i, chunk) in t.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(chunk).map_err(|_| "not hex".to_string())?;
        out[i] = u8::from_str_radix(s, 16).map_err(|_| format!("`{s}` is not hex"))?;
    }
    Ok(out)
}

fn read_key_file(path: &Path) -> Result<[u8; 32], KeyError> {
    let text =
        faultbench_core::fsutil::read_regular_string_capped(path, MAX_KEY_FILE).map_err(|e| {
            KeyError::Read {
                path: path.to_path_buf(),
                message: e.reason(),
            }
        })?;
    parse_hex32(&text).map_err(|reason| KeyError::Format {
        path: path.to_path_buf(),
        reason,
    })
}

impl SecretKey {
    /// Reads a secret key file.
    pub fn read(path: &Path) -> Result<SecretKey, KeyError> {
        Ok(SecretKey(SigningKey::from_bytes(&read_key_file(path)?)))
    }

    /// The matching public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs a message.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

impl PublicKey {
    /// Reads a public key file.
    pub fn read(path: &Path) -> Result<PublicKey, KeyError> {
        let bytes = read_key_file(path)?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| KeyError::Format {
                path: path.to_path_buf(),
                reason: "not a point of the curve".into(),
            })
    }

    /// A public key from its hex form (as bundles carry it); `None` when it is not one.
    pub fn from_hex(text: &str) -> Option<PublicKey> {
        let bytes = parse_hex32(text).ok()?;
        VerifyingKey::from_bytes(&bytes).ok().map(PublicKey)
    }

    /// The key in hex (64 digits).
    pub fn to_hex(&self) -> String {
        crate::hex(self.0.as_bytes())
    }

    /// A short fingerprint for tables: the first 16 hex digits of the key's SHA-256.
    pub fn fingerprint(&self) -> String {
        crate::sha256_hex(self.0.as_bytes())[..16].to_string()
    }

    /// Checks a signature (strict: malleable signatures and weak keys are refused).
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> Result<(), KeyError> {
        let sig = Signature::from_bytes(signature);
        self.0
            .verify_strict(message, &sig)
            .map_err(|_| KeyError::BadSignature)
    }
}

/// Writes a new key pair into `dir` (created if missing): [`SECRET_FILE`] (mode 0600) and
/// [`PUBLIC_FILE`]. Refuses to replace existing key files. Returns (secret, public) paths.
pub fn keygen(dir: &Path) -> Result<(PathBuf, PathBuf), KeyError> {
    let out = OutputDir::open(dir, "")?;
    for name in [SECRET_FILE, PUBLIC_FILE] {
        let p = out.file_path(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Err(KeyError::Exists(p));
        }
    }
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
    let sk = SigningKey::from_bytes(&seed);
    let secret_text = format!("{}\n", crate::hex(&seed));
    seed.fill(0);
    let secret = out.write_with(SECRET_FILE, |f| {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        // Restricted before a byte of the key is written.
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        f.write_all(secret_text.as_bytes())
    })?;
    let public = out.write(
        PUBLIC_FILE,
        format!("{}\n", crate::hex(sk.verifying_key().as_bytes())).as_bytes(),
    )?;
    Ok((secret, public))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keygen_writes_a_private_secret_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let (s, p) = keygen(dir.path()).unwrap();
        let mode = std::fs::metadata(&s).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let sk = SecretKey::read(&s).unwrap();
        assert_eq!(sk.public(), PublicKey::read(&p).unwrap());
        let e = keygen(dir.path()).unwrap_err();
        assert!(matches!(e, KeyError::Exists(_)), "{e}");
    }

    #[test]
    fn a_bad_key_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.pub");
        std::fs::write(&p, "zz").unwrap();
        let e = PublicKey::read(&p).unwrap_err().to_string();
        assert!(e.contains("k.pub") && e.contains("64 hex digits"), "{e}");
        std::fs::write(&p, "g".repeat(64)).unwrap();
        assert!(PublicKey::read(&p).is_err());
    }

    #[test]
    fn another_key_does_not_verify() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (sa, _) = keygen(a.path()).unwrap();
        let (_, pb) = keygen(b.path()).unwrap();
        let sig = SecretKey::read(&sa).unwrap().sign(b"m");
        assert!(PublicKey::read(&pb).unwrap().verify(b"m", &sig).is_err());
    }
}
