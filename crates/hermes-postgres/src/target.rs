//! Which database, and which schema in it: parsed from the URL once, and
//! described for messages without the password.

use std::str::FromStr;

use crate::PgError;

/// The schema a profile's tables live in when none is named.
pub const DEFAULT_SCHEMA: &str = "hermes";

/// A database and the schema Hermes uses in it.
#[derive(Clone)]
pub struct Target {
    config: postgres::Config,
    schema: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Target {
    /// The database `url` names (`postgresql://USER:PASSWORD@HOST:PORT/DATABASE`), with
    /// Hermes' tables in `schema` (letters, digits and `_`; one per profile).
    pub fn parse(url: &str, schema: &str) -> Result<Self, PgError> {
        let url = url.trim();
        if !(url.starts_with("postgresql://") || url.starts_with("postgres://")) {
            return Err(PgError::Url(format!(
                "it should start with postgresql://, got {}",
                redact_url(url)
            )));
        }
        let mut config = postgres::Config::from_str(url)
            .map_err(|_| PgError::Url(format!("cannot read {}", redact_url(url))))?;
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if config.get_application_name().is_none() {
            config.application_name("hermes");
        }
        config.connect_timeout(std::time::Duration::from_secs(10));
        if !valid_schema(schema) {
            return Err(PgError::Url(format!(
                "the schema name {schema:?} may hold only lowercase letters, digits and _"
            )));
        }
        Ok(Self {
            config,
            schema: schema.to_owned(),
        })
    }

    /// `user@host:port/database (schema S)`, never the password.
    pub fn describe(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => "localhost".to_owned(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!(
            "{}@{host}:{port}/{} (schema {})",
            self.config.get_user().unwrap_or("?"),
            self.config.get_dbname().unwrap_or("?"),
            self.schema
        )
    }

    /// The schema Hermes' tables are in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Opens one connection, its search path set to the schema.
    pub(crate) fn connect(&self) -> Result<postgres::Client, PgError> {
        let mut client = self
            .config
            .connect(postgres::NoTls)
            .map_err(|e| PgError::Connect {
                target: self.describe(),
                reason: crate::error::reason(&e),
            })?;
        client
            .batch_execute(&format!("SET search_path TO {}, public", self.schema))
            .map_err(|e| PgError::Connect {
                target: self.describe(),
                reason: crate::error::reason(&e),
            })?;
        Ok(client)
    }
}

fn valid_schema(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `url` with its password replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    let hidden = if userinfo.contains(':') {
        format!("{user}:***")
    } else {
        user.to_owned()
    };
    // A password may also come as a query parameter.
    let tail = match tail.find("password=") {
        Some(i) => {
            let end = tail[i..].find('&').map_or(tail.len(), |e| i + e);
            format!("{}password=***{}", &tail[..i], &tail[end..])
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{hidden}@{host}{tail}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_are_described_without_their_password() {
        let t = Target::parse("postgresql://me:s3cret@db.example:6543/hermes", "hermes").unwrap();
        assert_eq!(t.describe(), "me@db.example:6543/hermes (schema hermes)");
        assert!(!format!("{t:?}").contains("s3cret"));
        assert_eq!(
            redact_url("postgresql://me:s3cret@db/x?sslmode=disable&password=p2"),
            "postgresql://me:***@db/x?sslmode=disable&password=***"
        );
        let bad = Target::parse("mysql://me:s3cret@db/x", "hermes").unwrap_err();
        assert!(!bad.to_string().contains("s3cret"), "{bad}");
        assert!(Target::parse("postgresql://me@db/x", "Bad-Name").is_err());
    }
}
