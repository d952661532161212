//! The home's small documents (cron jobs and outputs, pairing files) as rows,
//! so every replica edits the same ones. A swap locks each name it writes
//! (a transaction-scoped advisory lock, so a document not yet written is
//! locked too), compares, writes, and commits, fenced when asked.

use hermes_state::coordination::Fence;
use hermes_state::documents::{Documents, Swap, Swapped};
use hermes_state::store::StoreError;

use crate::coordination::fence_held;
use crate::error::{Ctx, PgError};
use crate::store::{PgStore, now};
use crate::text::{dec, enc};

/// Advisory lock class of document names (the two-key form, apart from the
/// schema lock's one-key space).
const DOCUMENT_LOCKS: i32 = 0x6865_7264;

/// `name` with LIKE's wildcards escaped, as a prefix pattern for its folder.
fn folder_pattern(folder: &str) -> String {
    let mut out = String::with_capacity(folder.len() + 2);
    for c in folder.trim_end_matches('/').chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str("/%");
    out
}

impl Documents for PgStore {
    fn read(&self, name: &str) -> Result<Option<String>, StoreError> {
        let name = name.to_owned();
        Ok(self.with(move |c| {
            Ok::<_, PgError>(
                c.query_opt("SELECT body FROM documents WHERE name = $1", &[&name])
                    .ctx("reading a document")?
                    .map(|r| dec(r.get(0))),
            )
        })?)
    }

    fn swap(&self, changes: &[Swap], fence: Option<&Fence>) -> Result<Swapped, StoreError> {
        let mut changes = changes.to_vec();
        // Always the same order, so two swaps over the same names never deadlock.
        changes.sort_by(|a, b| a.name.cmp(&b.name));
        let fence = fence.cloned();
        Ok(self.with(move |c| {
            const CTX: &str = "writing a document";
            let mut tx = c.transaction().ctx(CTX)?;
            if let Some(f) = &fence
                && !fence_held(&mut tx, f).ctx(CTX)?
            {
                return Ok(Swapped::Fenced);
            }
            for change in &changes {
                tx.execute(
                    "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/' || $2))",
                    &[&DOCUMENT_LOCKS, &change.name],
                )
                .ctx(CTX)?;
                let current = tx
                    .query_opt(
                        "SELECT body FROM documents WHERE name = $1",
                        &[&change.name],
                    )
                    .ctx(CTX)?
                    .map(|r| dec(r.get(0)));
                if current != change.before {
                    return Ok(Swapped::Changed);
                }
            }
            let at = now();
            for change in &changes {
                match &change.after {
                    Some(body) => tx.execute(
                        "INSERT INTO documents (name, body, updated_at) VALUES ($1, $2, $3) \
                         ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body, \
                         updated_at = EXCLUDED.updated_at",
                        &[&change.name, &enc(body), &at],
                    ),
                    None => tx.execute("DELETE FROM documents WHERE name = $1", &[&change.name]),
                }
                .ctx(CTX)?;
            }
            tx.commit().ctx(CTX)?;
            Ok::<_, PgError>(Swapped::Done)
        })?)
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, StoreError> {
        let pattern = folder_pattern(folder);
        Ok(self.with(move |c| {
            Ok::<_, PgError>(
                c.query(
                    "SELECT name FROM documents WHERE name LIKE $1 ORDER BY name COLLATE \"C\"",
                    &[&pattern],
                )
                .ctx("listing documents")?
                .iter()
                .map(|r| r.get::<_, String>(0))
                .filter(|n| !n.rsplit('/').next().is_some_and(|f| f.starts_with('.')))
                .collect(),
            )
        })?)
    }

    fn describe(&self, name: &str) -> String {
        format!("{name} in {}", self.target().describe())
    }

    fn remove_folder(&self, folder: &str) -> Result<(), StoreError> {
        let pattern = folder_pattern(folder);
        Ok(self.with(move |c| {
            c.execute("DELETE FROM documents WHERE name LIKE $1", &[&pattern])
                .ctx("removing documents")
                .map(|_| ())
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::folder_pattern;

    #[test]
    fn folder_patterns_match_only_that_folder() {
        assert_eq!(folder_pattern("cron/output/ab_c"), "cron/output/ab\\_c/%");
        assert_eq!(folder_pattern("a%/"), "a\\%/%");
    }
}
