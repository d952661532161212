//! URL safety for every tool that fetches: blocks requests to loopback, private,
//! link-local and cloud-metadata addresses (server-side request forgery).
//!
//! The host is checked after resolution, every resolved address must pass, and
//! failures close (a DNS error blocks). Numeric IPv4 spellings that resolvers
//! accept (`2130706433`, `0x7f.1`, `127.1`, octal) are decoded the way
//! `inet_aton` does, so they cannot slip past as "host names". Cloud metadata
//! endpoints stay blocked even when `security.allow_private_urls` is on.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use hermes_state::Config;

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

/// The parts of a URL the check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// Lower-cased host without brackets, zone id or trailing dot.
    host: String,
    /// A literal address, when the host is one (in any spelling).
    literal: Option<IpAddr>,
}

/// Checks `url` under `policy`, resolving its host with `resolver`.
pub fn check_url(url: &str, policy: UrlPolicy, resolver: &dyn Resolver) -> Result<(), UrlBlock> {
    let target = parse(url)?;
    if BLOCKED_HOSTNAMES.contains(&target.host.as_str()) {
        return Err(UrlBlock::Metadata(target.host));
    }
    let addresses = match target.literal {
        Some(ip) => vec![ip],
        None => match resolver.resolve(&target.host) {
            Ok(found) if !found.is_empty() => found,
            _ => return Err(UrlBlock::Dns(target.host)),
        },
    };
    for ip in addresses {
        if is_always_blocked(ip) {
            return Err(UrlBlock::Metadata(format!("{} ({ip})", target.host)));
        }
        if !policy.allow_private && is_private(ip) {
            return Err(UrlBlock::Private {
                host: target.host,
                ip,
            });
        }
    }
    Ok(())
}

/// Checks every hop of a redirect chain: each `Location` is resolved against
/// the URL before it and checked like the first.
#[derive(Debug)]
pub struct RedirectGuard<'a> {
    policy: UrlPolicy,
    resolver: &'a dyn Resolver,
    current: String,
    hops: usize,
}

impl std::fmt::Debug for dyn Resolver + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Resolver")
    }
}

impl<'a> RedirectGuard<'a> {
    /// Checks the starting URL and returns a guard positioned on it.
    pub fn start(
        url: &str,
        policy: UrlPolicy,
        resolver: &'a dyn Resolver,
    ) -> Result<Self, UrlBlock> {
        check_url(url, policy, resolver)?;
        Ok(Self {
            policy,
            resolver,
            current: url.to_owned(),
            hops: 0,
        })
    }

    /// Follows a `Location` header: the absolute next URL, once it passes.
    pub fn follow(&mut self, location: &str) -> Result<String, UrlBlock> {
        self.hops += 1;
        if self.hops > MAX_REDIRECTS {
            return Err(UrlBlock::TooManyRedirects);
        }
        let next = join(&self.current, location.trim())?;
        check_url(&next, self.policy, self.resolver)?;
        self.current.clone_from(&next);
        Ok(next)
    }

    /// The URL the chain has reached.
    pub fn current(&self) -> &str {
        &self.current
    }
}

/// `location` made absolute against `base`.
fn join(base: &str, location: &str) -> Result<String, UrlBlock> {
    if location.contains("://") {
        return Ok(location.to_owned());
    }
    let (scheme, rest) = base
        .split_once("://")
        .ok_or_else(|| UrlBlock::Malformed(base.to_owned()))?;
    if let Some(authority_path) = location.strip_prefix("//") {
        return Ok(format!("{scheme}://{authority_path}"));
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    if location.starts_with('/') {
        return Ok(format!("{origin}{location}"));
    }
    let path = &rest[authority_end..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Ok(format!("{origin}{dir}{location}"))
}

fn parse(url: &str) -> Result<Target, UrlBlock> {
    let url = url.trim();
    let malformed = || UrlBlock::Malformed(url.to_owned());
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| match url.split_once(':') {
            Some((scheme, _)) if !scheme.is_empty() => {
                UrlBlock::Scheme(scheme.to_ascii_lowercase())
            }
            _ => UrlBlock::Malformed(url.to_owned()),
        })?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(UrlBlock::Scheme(scheme));
    }
    // Backslashes end the authority too: browsers and some clients treat them as `/`.
    let authority = &rest[..rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len())];
    // The host follows the LAST `@`: `http://evil.com@127.0.0.1/` goes to 127.0.0.1.
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(inner) = hostport.strip_prefix('[') {
        let (inner, _port) = inner.split_once(']').ok_or_else(malformed)?;
        // A zone id (`fe80::1%25eth0`) names an interface, not another address.
        let inner = inner.split('%').next().unwrap_or(inner);
        let ip: Ipv6Addr = inner.parse().map_err(|_| malformed())?;
        return Ok(Target {
            host: ip.to_string(),
            literal: Some(IpAddr::V6(ip)),
        });
    } else {
        hostport.rsplit_once(':').map_or(hostport, |(h, _)| h)
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(malformed());
    }
    // Percent-escapes and stray characters in a host only serve to confuse parsers.
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
    {
        return Err(malformed());
    }
    let literal = parse_ipv4_loose(&host).map(IpAddr::V4);
    Ok(Target { host, literal })
}

/// An IPv4 address in any spelling `inet_aton` accepts: 1–4 dot-separated parts,
/// each decimal, `0x` hex or `0`-prefixed octal; the last part fills the rest.
fn parse_ipv4_loose(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        values.push(parse_ipv4_part(part)?);
    }
    let (last, leading) = values.split_last()?;
    let mut addr: u64 = 0;
    for (i, v) in leading.iter().enumerate() {
        if *v > 255 {
            return None;
        }
        addr |= v << (24 - 8 * i);
    }
    let room = 32 - 8 * leading.len();
    if *last >= 1u64 << room {
        return None;
    }
    addr |= last;
    u32::try_from(addr).ok().map(Ipv4Addr::from)
}

fn parse_ipv4_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x").or(part.strip_prefix("0X")) {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        // `0x` alone is zero to inet_aton.
        return (radix == 16).then_some(0);
    }
    u64::from_str_radix(digits, radix)
        .ok()
        .filter(|v| *v <= u64::from(u32::MAX))
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

/// The IPv4 address an address is or carries (plain, IPv4-mapped, IPv4-compatible, NAT64).
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let tail = Ipv4Addr::new(
                (s[6] >> 8) as u8,
                (s[6] & 0xff) as u8,
                (s[7] >> 8) as u8,
                (s[7] & 0xff) as u8,
            );
            let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
            // `::a.b.c.d` (but not `::` or `::1`, which are IPv6 in their own right).
            let compatible = s[..6] == [0; 6] && (s[6] != 0);
            let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
            (mapped || compatible || nat64).then_some(tail)
        }
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
        || (s[0] == 0x2001 && s[1] < 0x0200) // 2001::/23 special purpose
        || s[0] == 0x2002 // 6to4 can wrap any IPv4 address
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
