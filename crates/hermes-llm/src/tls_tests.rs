use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConnection, ServerConnection};

use super::*;

/// A self-signed certificate for `localhost` (no system root trusts it).
const CERT: &[u8] = include_bytes!("../testdata/self-signed-cert.der");
const KEY: &[u8] = include_bytes!("../testdata/self-signed-key.der");

/// Runs a TLS handshake in memory between `client` and a server presenting
/// the self-signed certificate; returns the client's error, if any.
fn handshake(client: rustls::ClientConfig) -> Result<(), rustls::Error> {
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from(CERT.to_vec())],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY.to_vec())),
    )
    .unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let mut client = ClientConnection::new(Arc::new(client), name).unwrap();
    let mut server = ServerConnection::new(Arc::new(server)).unwrap();
    for _ in 0..10 {
        let mut wire = Vec::new();
        while client.wants_write() {
            client.write_tls(&mut wire).unwrap();
        }
        server.read_tls(&mut wire.as_slice()).unwrap();
        if let Err(e) = server.process_new_packets() {
            return Err(client_error(&mut client, &mut server).unwrap_or(e));
        }
        let mut back = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut back).unwrap();
        }
        client.read_tls(&mut back.as_slice()).unwrap();
        client.process_new_packets()?;
        if !client.is_handshaking() {
            return Ok(());
        }
    }
    panic!("handshake did not finish");
}

fn client_error(
    client: &mut ClientConnection,
    server: &mut ServerConnection,
) -> Option<rustls::Error> {
    let mut back = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut back).ok()?;
    }
    client.read_tls(&mut back.as_slice()).ok()?;
    client.process_new_packets().err()
}

#[test]
fn roots_are_not_read_until_a_certificate_is_checked() {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let lazy = LazyRoots {
        provider,
        verifier: OnceLock::new(),
    };
    assert!(!lazy.supported_verify_schemes().is_empty());
    assert!(lazy.verifier.get().is_none());
}

#[test]
fn an_untrusted_certificate_is_refused() {
    let err = handshake(client_config().unwrap()).unwrap_err();
    assert!(
        matches!(err, rustls::Error::InvalidCertificate(_)),
        "{err:?}"
    );
}

#[test]
fn the_same_certificate_passes_when_trusted_so_the_refusal_is_about_trust() {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(CERT.to_vec())).unwrap();
    let trusting = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    handshake(trusting).unwrap();
}

#[test]
fn alpn_offers_http2_then_http1() {
    let config = client_config().unwrap();
    assert_eq!(
        config.alpn_protocols,
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    );
}
