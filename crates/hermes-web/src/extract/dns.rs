//! The resolver the fetch client connects with: each name is resolved once,
//! every address checked against the URL policy, and only the checked
//! addresses handed to the connection. Checking a URL and then letting the
//! client resolve the name again would let a DNS server answer a public
//! address to the check and a private one to the connection (rebinding).

use std::net::SocketAddr;
use std::sync::Arc;

use hermes_tools::url_safety::{Resolver, UrlBlock, UrlPolicy, resolve_checked};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A `reqwest` resolver that refuses names whose addresses the policy forbids.
#[derive(Debug, Clone)]
pub struct CheckedDns {
    policy: UrlPolicy,
    resolver: Arc<dyn Resolver>,
    /// Proxy hosts the user configured: not model-given, so not checked.
    proxies: Arc<[String]>,
}

impl CheckedDns {
    /// Resolves with `resolver`, permitting what `policy` permits; names in
    /// `proxies` are resolved without the check.
    pub fn new(policy: UrlPolicy, resolver: Arc<dyn Resolver>, proxies: Vec<String>) -> Self {
        Self {
            policy,
            resolver,
            proxies: proxies.into(),
        }
    }
}

impl Resolve for CheckedDns {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().trim_end_matches('.').to_ascii_lowercase();
        let this = self.clone();
        Box::pin(async move {
            // The resolver blocks (getaddrinfo), so it runs off the runtime.
            let found = tokio::task::spawn_blocking(move || {
                if this.proxies.contains(&host) {
                    match this.resolver.resolve(&host) {
                        Ok(found) if !found.is_empty() => Ok(found),
                        _ => Err(UrlBlock::Dns(host)),
                    }
                } else {
                    resolve_checked(&host, this.policy, this.resolver.as_ref())
                }
            })
            .await??;
            let addrs: Addrs = Box::new(found.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The hosts of the proxies reqwest takes from the environment, which the
/// fetch client reaches through this resolver too.
pub fn proxy_hosts() -> Vec<String> {
    ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]
        .into_iter()
        .flat_map(|name| [name.to_owned(), name.to_ascii_lowercase()])
        .filter_map(|name| std::env::var(name).ok())
        .filter_map(|value| {
            let value = value.trim();
            let value = if value.contains("://") {
                value.to_owned()
            } else {
                format!("http://{value}")
            };
            reqwest::Url::parse(&value)
                .ok()?
                .host_str()
                .map(str::to_ascii_lowercase)
        })
        .collect()
}

/// The policy refusal inside a request error, if that is why it failed.
pub fn refusal<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a UrlBlock> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(block) = e.downcast_ref::<UrlBlock>() {
            return Some(block);
        }
        current = e.source();
    }
    None
}
