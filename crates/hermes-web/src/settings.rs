//! What the web tools are configured with, read as the reference reads it:
//! `web.backend`, `web.search_backend`, `web.extract_backend`,
//! `web.extract_char_limit` in config.yaml, and each backend's key in the
//! environment (`TAVILY_API_KEY`, `SEARXNG_URL` …).

use std::path::PathBuf;

use hermes_tools::url_safety::UrlPolicy;
use serde_json::Value;

/// A web backend the reference knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Tavily (search and extract).
    Tavily,
    /// Exa (search and extract).
    Exa,
    /// Parallel (search and extract).
    Parallel,
    /// Firecrawl, cloud or self-hosted (search and extract).
    Firecrawl,
    /// A SearXNG instance (search only).
    Searxng,
    /// Brave Search's free API (search only).
    Brave,
    /// DuckDuckGo's HTML results, no key (search only).
    Ddgs,
}

impl Backend {
    /// Every backend, in the reference's order of preference when several are set up.
    pub const ALL: [Backend; 7] = [
        Self::Tavily,
        Self::Exa,
        Self::Parallel,
        Self::Firecrawl,
        Self::Searxng,
        Self::Brave,
        Self::Ddgs,
    ];

    /// Its name in config.yaml.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tavily => "tavily",
            Self::Exa => "exa",
            Self::Parallel => "parallel",
            Self::Firecrawl => "firecrawl",
            Self::Searxng => "searxng",
            Self::Brave => "brave-free",
            Self::Ddgs => "ddgs",
        }
    }

    /// The backend a config name means.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|b| b.name() == name || (name == "brave" && *b == Self::Brave))
    }

    /// Whether it can read pages (the rest only search).
    pub fn extracts(self) -> bool {
        matches!(
            self,
            Self::Tavily | Self::Exa | Self::Parallel | Self::Firecrawl
        )
    }
}

/// Each backend's credentials, as found in the environment.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    /// `TAVILY_API_KEY`.
    pub tavily: Option<String>,
    /// `TAVILY_BASE_URL`.
    pub tavily_base: Option<String>,
    /// `EXA_API_KEY`.
    pub exa: Option<String>,
    /// `PARALLEL_API_KEY`.
    pub parallel: Option<String>,
    /// `PARALLEL_BASE_URL`.
    pub parallel_base: Option<String>,
    /// `PARALLEL_SEARCH_MODE` (agentic, fast, one-shot).
    pub parallel_mode: Option<String>,
    /// `FIRECRAWL_API_KEY`.
    pub firecrawl: Option<String>,
    /// `FIRECRAWL_API_URL` (a self-hosted Firecrawl).
    pub firecrawl_url: Option<String>,
    /// `SEARXNG_URL`.
    pub searxng_url: Option<String>,
    /// `BRAVE_SEARCH_API_KEY`.
    pub brave: Option<String>,
    /// `HERMES_DDGS_URL`: another DuckDuckGo HTML endpoint (tests, proxies).
    pub ddgs_url: Option<String>,
}

impl Keys {
    /// Whether `backend` has what it needs.
    pub fn available(&self, backend: Backend) -> bool {
        match backend {
            Backend::Tavily => self.tavily.is_some(),
            Backend::Exa => self.exa.is_some(),
            Backend::Parallel => self.parallel.is_some(),
            Backend::Firecrawl => self.firecrawl.is_some() || self.firecrawl_url.is_some(),
            Backend::Searxng => self.searxng_url.is_some(),
            Backend::Brave => self.brave.is_some(),
            Backend::Ddgs => true,
        }
    }
}

/// Everything the web tools need.
#[derive(Debug, Clone)]
pub struct WebSettings {
    /// `web.backend`.
    pub backend: Option<String>,
    /// `web.search_backend`.
    pub search_backend: Option<String>,
    /// `web.extract_backend`.
    pub extract_backend: Option<String>,
    /// `web.extract_char_limit` (15 000).
    pub char_limit: usize,
    /// The backends' keys.
    pub keys: Keys,
    /// Which addresses may be fetched.
    pub policy: UrlPolicy,
    /// Where long pages are kept whole (`HERMES_HOME/cache/web`).
    pub cache_dir: PathBuf,
    /// `pdftotext`, when it is on the `PATH` (PDFs to text).
    pub pdftotext: Option<PathBuf>,
}

/// The default characters of a page sent back.
pub const DEFAULT_CHAR_LIMIT: usize = 15_000;

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl WebSettings {
    /// Reads config.yaml's tree and the environment (`env`); pages are cached
    /// under `hermes_home`.
    pub fn read(
        tree: &Value,
        env: &dyn Fn(&str) -> Option<String>,
        policy: UrlPolicy,
        hermes_home: &std::path::Path,
    ) -> Self {
        let var = |name: &str| {
            env(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let url = |name: &str| var(name).map(|v| v.trim_end_matches('/').to_owned());
        let char_limit = tree
            .pointer("/web/extract_char_limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_CHAR_LIMIT, |n| clamp_limit(n as usize));
        let pdftotext = var("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("pdftotext"))
                .find(|p| p.is_file())
        });
        Self {
            backend: text(tree.pointer("/web/backend")),
            search_backend: text(tree.pointer("/web/search_backend")),
            extract_backend: text(tree.pointer("/web/extract_backend")),
            char_limit,
            keys: Keys {
                tavily: var("TAVILY_API_KEY"),
                tavily_base: url("TAVILY_BASE_URL"),
                exa: var("EXA_API_KEY"),
                parallel: var("PARALLEL_API_KEY"),
                parallel_base: url("PARALLEL_BASE_URL"),
                parallel_mode: var("PARALLEL_SEARCH_MODE"),
                firecrawl: var("FIRECRAWL_API_KEY"),
                firecrawl_url: url("FIRECRAWL_API_URL"),
                searxng_url: url("SEARXNG_URL"),
                brave: var("BRAVE_SEARCH_API_KEY"),
                ddgs_url: url("HERMES_DDGS_URL"),
            },
            policy,
            cache_dir: hermes_home.join("cache").join("web"),
            pdftotext,
        }
    }

    /// The backend `web_search` uses: `web.search_backend` when it is set up,
    /// else `web.backend` (set up or not: its error then says what is
    /// missing), else the first set up in the reference's order — DuckDuckGo
    /// needs no key, so there always is one.
    pub fn search_backend(&self) -> Backend {
        self.chosen(self.search_backend.as_deref(), |_| true)
    }

    /// The backend that reads pages for `web_extract`, if any; `None` means
    /// this build fetches and converts them itself.
    pub fn extract_backend(&self) -> Option<Backend> {
        if let Some(b) = self.extract_backend.as_deref().and_then(Backend::parse)
            && b.extracts()
            && self.keys.available(b)
        {
            return Some(b);
        }
        if let Some(b) = self.backend.as_deref().and_then(Backend::parse)
            && b.extracts()
        {
            return Some(b);
        }
        Backend::ALL
            .into_iter()
            .find(|b| b.extracts() && self.keys.available(*b))
    }

    fn chosen(&self, specific: Option<&str>, fits: impl Fn(Backend) -> bool) -> Backend {
        if let Some(b) = specific.and_then(Backend::parse)
            && fits(b)
            && self.keys.available(b)
        {
            return b;
        }
        if let Some(b) = self.backend.as_deref().and_then(Backend::parse)
            && fits(b)
        {
            return b;
        }
        Backend::ALL
            .into_iter()
            .find(|b| fits(*b) && self.keys.available(*b))
            .unwrap_or(Backend::Ddgs)
    }
}

/// A page budget within the reference's bounds (2 000 – 500 000).
pub fn clamp_limit(n: usize) -> usize {
    n.clamp(2_000, 500_000)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(tree: Value, vars: &[(&str, &str)]) -> WebSettings {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let env = move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        WebSettings::read(
            &tree,
            &env,
            UrlPolicy::default(),
            std::path::Path::new("/h"),
        )
    }

    #[test]
    fn keys_pick_backends_in_the_reference_order() {
        let s = settings(json!({}), &[]);
        assert_eq!(s.search_backend(), Backend::Ddgs);
        assert_eq!(s.extract_backend(), None, "pages are fetched here");
        let s = settings(
            json!({}),
            &[
                ("SEARXNG_URL", "http://127.0.0.1:8888/"),
                ("EXA_API_KEY", "e"),
            ],
        );
        assert_eq!(s.search_backend(), Backend::Exa);
        assert_eq!(s.keys.searxng_url.as_deref(), Some("http://127.0.0.1:8888"));
        let s = settings(
            json!({"web": {"search_backend": "searxng"}}),
            &[("SEARXNG_URL", "http://x"), ("EXA_API_KEY", "e")],
        );
        assert_eq!(s.search_backend(), Backend::Searxng);
        assert_eq!(s.extract_backend(), Some(Backend::Exa));
    }

    #[test]
    fn a_named_backend_is_used_even_without_its_key() {
        let s = settings(
            json!({"web": {"backend": "tavily", "extract_char_limit": 100}}),
            &[],
        );
        assert_eq!(s.search_backend(), Backend::Tavily);
        assert_eq!(s.extract_backend(), Some(Backend::Tavily));
        assert_eq!(s.char_limit, 2_000);
        let s = settings(
            json!({"web": {"backend": "searxng"}}),
            &[("SEARXNG_URL", "http://x")],
        );
        assert_eq!(
            s.extract_backend(),
            None,
            "a search-only backend leaves pages to us"
        );
    }
}
