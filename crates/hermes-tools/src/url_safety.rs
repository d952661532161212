//! URL safety for every tool that fetches: blocks requests to loopback, private,
//! link-local and cloud-metadata addresses (server-side request forgery).
//!
//! URLs are parsed by the `url` crate, the parser reqwest uses, so the host
//! checked is the host connected to; it decodes every numeric IPv4 spelling
//! (`2130706433`, `0x7f.1`, `127.1`, octal) as WHATWG browsers do. The host is
//! checked after resolution, every resolved address must pass, and failures
//! close (a DNS error blocks). [`resolve_checked`] is the resolution a fetching
//! client should connect with, so a name cannot answer one address to the check
//! and another to the connection (DNS rebinding). IPv4 addresses carried inside
//! IPv6 ones (mapped, translated, compatible, NAT64, 6to4) are judged as IPv4.
//! Cloud metadata endpoints stay blocked even when
//! `security.allow_private_urls` is on.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use std::sync::Arc;

use hermes_state::Config;
use url::Host;
pub use url::Url;

/// Host names that are always blocked: cloud metadata services.
const BLOCKED_HOSTNAMES: &[&str] = &["metadata.google.internal", "metadata.goog"];

/// Addresses that are always blocked: metadata and credential endpoints.
const ALWAYS_BLOCKED_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(169, 254, 169, 253),
    Ipv4Addr::new(100, 100, 100, 200),
];

/// AWS's IPv6 metadata address, `fd00:ec2::254`.
const EC2_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);

/// Redirect hops followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlBlock {
    /// Only http and https are fetched.
    #[error("blocked URL: unsupported scheme '{0}' (only http and https are allowed)")]
    Scheme(String),
    /// The URL could not be parsed.
    #[error("blocked URL: cannot parse it ({0})")]
    Malformed(String),
    /// A cloud metadata host name or address.
    #[error("blocked URL: {0} is a cloud metadata endpoint")]
    Metadata(String),
    /// Resolves to a private or internal address.
    #[error(
        "blocked URL: {host} resolves to the private/internal address {ip} (set security.allow_private_urls: true to allow)"
    )]
    Private {
        /// The host as written.
        host: String,
        /// The offending address.
        ip: IpAddr,
    },
    /// The name did not resolve (blocked rather than guessed).
    #[error("blocked URL: cannot resolve {0}")]
    Dns(String),
    /// Too many redirects.
    #[error("blocked URL: more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects,
}

/// Resolves host names; injectable so tests run offline.
pub trait Resolver: Send + Sync {
    /// Every address `host` resolves to.
    fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (blocking; call from `spawn_blocking` in async code).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok((host, 0).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// What the check permits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// `security.allow_private_urls`: permit private addresses (metadata stays blocked).
    pub allow_private: bool,
}

impl UrlPolicy {
    /// Reads `security.allow_private_urls` (or the legacy `browser.allow_private_urls`).
    pub fn from_config(config: &Config) -> Self {
        let s = &config.sections;
        Self {
            allow_private: s.security.allow_private_urls == Some(true)
                || s.browser.allow_private_urls == Some(true),
        }
    }
}

/// Parses `url` with the parser reqwest uses, so the host checked is the host
/// connected to, and refuses schemes other than http(s).
pub fn parse_url(url: &str) -> Result<Url, UrlBlock> {
    let url = url.trim();
    let parsed = Url::parse(url).map_err(|_| UrlBlock::Malformed(url.to_owned()))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(UrlBlock::Scheme(other.to_owned())),
    }
}

/// The host as checked: lower-cased, without brackets or trailing dot, and the
/// address when it is a literal (the parser has decoded every IPv4 spelling).
fn target(url: &Url) -> Result<(String, Option<IpAddr>), UrlBlock> {
    match url.host() {
        Some(Host::Ipv4(v4)) => Ok((v4.to_string(), Some(IpAddr::V4(v4)))),
        Some(Host::Ipv6(v6)) => Ok((v6.to_string(), Some(IpAddr::V6(v6)))),
        Some(Host::Domain(name)) if !name.trim_end_matches('.').is_empty() => {
            Ok((name.trim_end_matches('.').to_ascii_lowercase(), None))
        }
        _ => Err(UrlBlock::Malformed(url.to_string())),
    }
}

/// Checks `url` under `policy`, resolving its host with `resolver`.
pub fn check_url(url: &str, policy: UrlPolicy, resolver: &dyn Resolver) -> Result<(), UrlBlock> {
    check_parsed(&parse_url(url)?, policy, resolver)
}

/// Checks an already parsed URL (see [`parse_url`]) under `policy`.
pub fn check_parsed(url: &Url, policy: UrlPolicy, resolver: &dyn Resolver) -> Result<(), UrlBlock> {
    let (host, literal) = target(url)?;
    let addresses = match literal {
        Some(ip) => vec![ip],
        None => return resolve_checked(&host, policy, resolver).map(|_| ()),
    };
    check_addresses(&host, &addresses, policy)
}

/// Resolves `host` with `resolver` and returns its addresses only when every
/// one passes `policy`: what a connection may use is exactly what was checked.
pub fn resolve_checked(
    host: &str,
    policy: UrlPolicy,
    resolver: &dyn Resolver,
) -> Result<Vec<IpAddr>, UrlBlock> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if BLOCKED_HOSTNAMES.contains(&host.as_str()) {
        return Err(UrlBlock::Metadata(host));
    }
    let addresses = match resolver.resolve(&host) {
        Ok(found) if !found.is_empty() => found,
        _ => return Err(UrlBlock::Dns(host)),
    };
    check_addresses(&host, &addresses, policy)?;
    Ok(addresses)
}

/// Refuses when any of `addresses` (what `host` stands for) is not permitted.
fn check_addresses(host: &str, addresses: &[IpAddr], policy: UrlPolicy) -> Result<(), UrlBlock> {
    for &ip in addresses {
        if is_always_blocked(ip) {
            return Err(UrlBlock::Metadata(format!("{host} ({ip})")));
        }
        if !policy.allow_private && is_private(ip) {
            return Err(UrlBlock::Private {
                host: host.to_owned(),
                ip,
            });
        }
    }
    Ok(())
}

/// Checks every hop of a redirect chain: each `Location` is resolved against
/// the URL before it and checked like the first.
#[derive(Debug)]
pub struct RedirectGuard {
    policy: UrlPolicy,
    resolver: Arc<dyn Resolver>,
    current: Url,
    hops: usize,
}

impl std::fmt::Debug for dyn Resolver + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Resolver")
    }
}

impl RedirectGuard {
    /// Checks the starting URL and returns a guard positioned on it.
    pub fn start(
        url: &str,
        policy: UrlPolicy,
        resolver: Arc<dyn Resolver>,
    ) -> Result<Self, UrlBlock> {
        let current = parse_url(url)?;
        check_parsed(&current, policy, resolver.as_ref())?;
        Ok(Self {
            policy,
            resolver,
            current,
            hops: 0,
        })
    }

    /// Follows a `Location` header: the absolute next URL, once it passes.
    pub fn follow(&mut self, location: &str) -> Result<String, UrlBlock> {
        self.hops += 1;
        if self.hops > MAX_REDIRECTS {
            return Err(UrlBlock::TooManyRedirects);
        }
        let location = location.trim();
        let next = self
            .current
            .join(location)
            .map_err(|_| UrlBlock::Malformed(location.to_owned()))?;
        let next = parse_url(next.as_str())?;
        check_parsed(&next, self.policy, self.resolver.as_ref())?;
        self.current = next;
        Ok(self.current.to_string())
    }

    /// The URL the chain has reached.
    pub fn current(&self) -> &str {
        self.current.as_str()
    }

    /// The URL the chain has reached, parsed (hand this to the HTTP client).
    pub fn current_url(&self) -> &Url {
        &self.current
    }
}

/// Metadata endpoints and link-local space: blocked whatever the policy says.
pub fn is_always_blocked(ip: IpAddr) -> bool {
    match embedded_v4(ip) {
        Some(v4) => {
            ALWAYS_BLOCKED_V4.contains(&v4) || (v4.octets()[0] == 169 && v4.octets()[1] == 254)
        }
        None => ip == IpAddr::V6(EC2_METADATA_V6),
    }
}

/// The IPv4 address an address is or carries: plain, IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, which takes `::` and `::1` to `0.0.0.x`: private either way),
/// NAT64 (`64:ff9b::/96`) or 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    let v6 = match ip {
        IpAddr::V4(v4) => return Some(v4),
        IpAddr::V6(v6) => v6,
    };
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
    let translated = s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
    let compatible = s[..6] == [0; 6];
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    if mapped || translated || compatible || nat64 {
        Some(v4(s[6], s[7]))
    } else if s[0] == 0x2002 {
        Some(v4(s[1], s[2]))
    } else {
        None
    }
}

/// Loopback, private, link-local, CGNAT, reserved, documentation, multicast or unspecified.
pub fn is_private(ip: IpAddr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_private_v4(v4);
    }
    let IpAddr::V6(v6) = ip else { return true };
    let s = v6.segments();
    v6.is_loopback()
        || v6.is_unspecified()
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x2001 && s[1] < 0x0200) // 2001::/23 special purpose (Teredo too)
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard 100::/64
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local NAT64 64:ff9b:1::/48
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
}

#[cfg(test)]
#[path = "url_safety_tests.rs"]
mod tests;
