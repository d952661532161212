use std::collections::HashMap;

use super::*;

/// Resolves from a fixed table; anything else fails like an unknown name.
struct FakeResolver(HashMap<&'static str, Vec<IpAddr>>);

impl FakeResolver {
    fn new() -> Self {
        let mut table = HashMap::new();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        table.insert("example.com", vec![ip("93.184.216.34")]);
        table.insert("api.example.com", vec![ip("93.184.216.35")]);
        table.insert("internal.corp", vec![ip("10.1.2.3")]);
        table.insert("rebind.evil", vec![ip("93.184.216.34"), ip("127.0.0.1")]);
        table.insert("v6only.example", vec![ip("2606:2800:220:1::1")]);
        table.insert("v6local.evil", vec![ip("fd12::1")]);
        table.insert("mapped.evil", vec![ip("::ffff:192.168.1.1")]);
        table.insert("meta.evil", vec![ip("169.254.169.254")]);
        table.insert("localhost", vec![ip("127.0.0.1"), ip("::1")]);
        Self(table)
    }
}

impl Resolver for FakeResolver {
    fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.0
            .get(host)
            .cloned()
            .ok_or_else(|| std::io::Error::other("no such host"))
    }
}

const ALLOW: &str = "ok";
const PRIVATE: &str = "private";
const META: &str = "metadata";
const SCHEME: &str = "scheme";
const BAD: &str = "malformed";
const DNS: &str = "dns";

fn verdict(url: &str, policy: UrlPolicy) -> &'static str {
    match check_url(url, policy, &FakeResolver::new()) {
        Ok(()) => ALLOW,
        Err(UrlBlock::Private { .. }) => PRIVATE,
        Err(UrlBlock::Metadata(_)) => META,
        Err(UrlBlock::Scheme(_)) => SCHEME,
        Err(UrlBlock::Malformed(_)) => BAD,
        Err(UrlBlock::Dns(_)) => DNS,
        Err(UrlBlock::TooManyRedirects) => "redirects",
    }
}

/// URL → verdict with the default policy, and with `allow_private_urls` on.
const CASES: &[(&str, &str, &str)] = &[
    ("https://example.com/", ALLOW, ALLOW),
    ("http://example.com:8080/path?q=1#f", ALLOW, ALLOW),
    ("HTTPS://API.EXAMPLE.COM/v1", ALLOW, ALLOW),
    ("https://example.com./", ALLOW, ALLOW),
    ("https://user:pass@example.com/", ALLOW, ALLOW),
    ("http://93.184.216.34/", ALLOW, ALLOW),
    ("http://v6only.example/", ALLOW, ALLOW),
    ("http://[2606:2800:220:1::1]/", ALLOW, ALLOW),
    // Loopback in every spelling.
    ("http://127.0.0.1/", PRIVATE, ALLOW),
    ("http://127.0.0.1:22/", PRIVATE, ALLOW),
    ("http://localhost/", PRIVATE, ALLOW),
    ("http://localhost:3000/admin", PRIVATE, ALLOW),
    ("http://2130706433/", PRIVATE, ALLOW),
    ("http://0x7f000001/", PRIVATE, ALLOW),
    ("http://0x7f.1/", PRIVATE, ALLOW),
    ("http://127.1/", PRIVATE, ALLOW),
    ("http://0177.0.0.1/", PRIVATE, ALLOW),
    ("http://017700000001/", PRIVATE, ALLOW),
    ("http://127.0.1/", PRIVATE, ALLOW),
    ("http://0/", PRIVATE, ALLOW),
    ("http://0.0.0.0/", PRIVATE, ALLOW),
    ("http://[::1]/", PRIVATE, ALLOW),
    ("http://[::]/", PRIVATE, ALLOW),
    ("http://[::ffff:127.0.0.1]/", PRIVATE, ALLOW),
    ("http://[::ffff:7f00:1]/", PRIVATE, ALLOW),
    // IPv4 inside IPv6: translated, compatible, NAT64, 6to4, and the v6 ranges.
    ("http://[::ffff:0:7f00:1]/", PRIVATE, ALLOW),
    ("http://[::ffff:0:127.0.0.1]/", PRIVATE, ALLOW),
    ("http://[::127.0.0.1]/", PRIVATE, ALLOW),
    ("http://[::7f00:1]/", PRIVATE, ALLOW),
    ("http://[::a00:1]/", PRIVATE, ALLOW),
    ("http://[64:ff9b::7f00:1]/", PRIVATE, ALLOW),
    ("http://[64:ff9b::127.0.0.1]/", PRIVATE, ALLOW),
    ("http://[2002:7f00:1::]/", PRIVATE, ALLOW),
    ("http://[2002:c0a8:101::1]/", PRIVATE, ALLOW),
    ("http://[2002:5db8:d822::1]/", ALLOW, ALLOW),
    ("http://[64:ff9b::5db8:d822]/", ALLOW, ALLOW),
    ("http://[0:0:0:0:0:0:0:1]/", PRIVATE, ALLOW),
    ("http://[fdff:ffff::1]/", PRIVATE, ALLOW),
    ("http://[febf::1]/", PRIVATE, ALLOW),
    // Private, CGNAT, unique-local, link-local.
    ("http://10.0.0.1/", PRIVATE, ALLOW),
    ("http://172.16.5.4/", PRIVATE, ALLOW),
    ("http://172.31.255.255/", PRIVATE, ALLOW),
    ("http://192.168.1.1/", PRIVATE, ALLOW),
    ("http://100.64.0.1/", PRIVATE, ALLOW),
    ("http://100.127.255.254/", PRIVATE, ALLOW),
    ("http://[fd12:3456::1]/", PRIVATE, ALLOW),
    ("http://[fc00::1]/", PRIVATE, ALLOW),
    // A zone id is not part of a URL host for the parser reqwest uses.
    ("http://[fe80::1%25eth0]/", BAD, BAD),
    ("http://[fe80::1]/", PRIVATE, ALLOW),
    ("http://[::ffff:10.0.0.1]/", PRIVATE, ALLOW),
    ("http://[64:ff9b::a00:1]/", PRIVATE, ALLOW),
    ("http://224.0.0.1/", PRIVATE, ALLOW),
    ("http://255.255.255.255/", PRIVATE, ALLOW),
    ("http://198.18.0.1/", PRIVATE, ALLOW),
    // Names that resolve to private addresses.
    ("http://internal.corp/", PRIVATE, ALLOW),
    ("http://rebind.evil/", PRIVATE, ALLOW),
    ("http://v6local.evil/", PRIVATE, ALLOW),
    ("http://mapped.evil/", PRIVATE, ALLOW),
    // Userinfo tricks: the host is what follows the last `@`.
    ("http://evil@127.0.0.1/", PRIVATE, ALLOW),
    ("http://example.com@127.0.0.1/", PRIVATE, ALLOW),
    ("http://user:pw@example.com:80@10.0.0.1/", PRIVATE, ALLOW),
    ("http://127.0.0.1@example.com/", ALLOW, ALLOW),
    ("http://127.0.0.1\\@example.com/", PRIVATE, ALLOW),
    // Metadata: blocked even when private addresses are allowed.
    ("http://169.254.169.254/latest/meta-data/", META, META),
    ("http://169.254.170.2/v2/credentials", META, META),
    ("http://169.254.1.1/", META, META),
    ("http://0xa9fea9fe/", META, META),
    ("http://2852039166/", META, META),
    ("http://[::ffff:169.254.169.254]/", META, META),
    ("http://[::ffff:0:a9fe:a9fe]/", META, META),
    ("http://[64:ff9b::a9fe:a9fe]/", META, META),
    ("http://[2002:a9fe:a9fe::]/", META, META),
    ("http://[fd00:ec2::254]/", META, META),
    ("http://100.100.100.200/", META, META),
    (
        "http://metadata.google.internal/computeMetadata/v1/",
        META,
        META,
    ),
    ("http://METADATA.GOOGLE.INTERNAL./", META, META),
    ("http://metadata.goog/", META, META),
    ("http://meta.evil/", META, META),
    // Schemes.
    ("file:///etc/passwd", SCHEME, SCHEME),
    ("ftp://example.com/", SCHEME, SCHEME),
    ("gopher://127.0.0.1:6379/_", SCHEME, SCHEME),
    ("javascript:alert(1)", SCHEME, SCHEME),
    ("data:text/plain,hi", SCHEME, SCHEME),
    // Malformed or unresolvable: fail closed.
    // Special schemes skip extra slashes: this is host `nohost`, as reqwest reads it.
    ("http:///nohost", DNS, DNS),
    ("http://", BAD, BAD),
    ("http://[::1/", BAD, BAD),
    ("http://127.0.0.1%2f/", BAD, BAD),
    ("not a url", BAD, BAD),
    ("http://does-not-exist.invalid/", DNS, DNS),
];

#[test]
fn table() {
    let allow = UrlPolicy {
        allow_private: true,
    };
    for (url, strict, relaxed) in CASES {
        assert_eq!(verdict(url, UrlPolicy::default()), *strict, "{url}");
        assert_eq!(verdict(url, allow), *relaxed, "{url} (allow_private_urls)");
    }
}

#[test]
fn dns_name_resolving_private_is_blocked_with_the_address() {
    let err = check_url(
        "https://internal.corp/x",
        UrlPolicy::default(),
        &FakeResolver::new(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        UrlBlock::Private {
            host: "internal.corp".into(),
            ip: "10.1.2.3".parse().unwrap(),
        }
    );
    assert!(err.to_string().contains("security.allow_private_urls"));
}

#[test]
fn redirect_chain_to_loopback_is_blocked() {
    let resolver = Arc::new(FakeResolver::new());
    let mut guard =
        RedirectGuard::start("https://example.com/a", UrlPolicy::default(), resolver).unwrap();
    assert_eq!(guard.follow("/b").unwrap(), "https://example.com/b");
    assert_eq!(guard.follow("c?x=1").unwrap(), "https://example.com/c?x=1");
    assert_eq!(
        guard.follow("//api.example.com/d").unwrap(),
        "https://api.example.com/d"
    );
    let err = guard.follow("http://127.0.0.1/admin").unwrap_err();
    assert!(matches!(err, UrlBlock::Private { .. }), "{err:?}");
    // The chain stays on the last good hop.
    assert_eq!(guard.current(), "https://api.example.com/d");
    assert!(matches!(
        guard.follow("http://169.254.169.254/"),
        Err(UrlBlock::Metadata(_))
    ));
}

#[test]
fn redirect_loops_end() {
    let resolver = Arc::new(FakeResolver::new());
    let mut guard =
        RedirectGuard::start("https://example.com/", UrlPolicy::default(), resolver).unwrap();
    for _ in 0..MAX_REDIRECTS {
        guard.follow("/again").unwrap();
    }
    assert_eq!(guard.follow("/again"), Err(UrlBlock::TooManyRedirects));
}

#[test]
fn loose_ipv4_spellings_are_decoded_by_the_parser() {
    for (url, ip) in [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://0177.0.0.01/", "127.0.0.1"),
        ("http://10.1/", "10.0.0.1"),
        ("http://192.168.257/", "192.168.1.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
    ] {
        let (_, literal) = target(&parse_url(url).unwrap()).unwrap();
        assert_eq!(literal, Some(ip.parse().unwrap()), "{url}");
    }
    for url in ["http://1.2.3.4.5/", "http://256.1.1.1/", "http://09/"] {
        assert!(parse_url(url).is_err(), "{url}");
    }
    let (host, literal) = target(&parse_url("http://Example.COM./").unwrap()).unwrap();
    assert_eq!((host.as_str(), literal), ("example.com", None));
}

#[test]
fn resolve_checked_returns_only_what_passed() {
    let resolver = FakeResolver::new();
    assert_eq!(
        resolve_checked("example.com", UrlPolicy::default(), &resolver).unwrap(),
        vec!["93.184.216.34".parse::<IpAddr>().unwrap()]
    );
    assert!(matches!(
        resolve_checked("rebind.evil", UrlPolicy::default(), &resolver),
        Err(UrlBlock::Private { .. })
    ));
    assert!(matches!(
        resolve_checked(
            "METADATA.google.internal.",
            UrlPolicy {
                allow_private: true
            },
            &resolver
        ),
        Err(UrlBlock::Metadata(_))
    ));
    assert_eq!(
        resolve_checked("nowhere.invalid", UrlPolicy::default(), &resolver),
        Err(UrlBlock::Dns("nowhere.invalid".into()))
    );
}

#[test]
fn policy_reads_config() {
    let env = hermes_state::Env::default();
    let config = hermes_state::Config::without_user_file(&env);
    assert!(!UrlPolicy::from_config(&config).allow_private);
}
