//! The API server's stored responses and conversation names, shared by
//! replicas (`response_store.db` on one machine).

use hermes_state::responses::ResponseStore;
use hermes_state::store::StoreError;

use crate::error::{Ctx, PgError};
use crate::store::{PgStore, now};
use crate::text::{dec, enc};

impl ResponseStore for PgStore {
    fn put(
        &self,
        id: &str,
        data: &str,
        conversation: Option<&str>,
        keep: usize,
    ) -> Result<(), StoreError> {
        let (id, data) = (id.to_owned(), data.to_owned());
        let conversation = conversation.map(str::to_owned);
        let keep = keep as i64;
        Ok(self.with(move |c| {
            const CTX: &str = "storing a response";
            let mut tx = c.transaction().ctx(CTX)?;
            tx.execute(
                "INSERT INTO api_responses (response_id, data, accessed_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (response_id) DO UPDATE SET data = EXCLUDED.data, \
                 accessed_at = EXCLUDED.accessed_at",
                &[&id, &enc(&data), &now()],
            )
            .ctx(CTX)?;
            tx.execute(
                "DELETE FROM api_responses WHERE response_id NOT IN \
                 (SELECT response_id FROM api_responses ORDER BY accessed_at DESC LIMIT $1)",
                &[&keep],
            )
            .ctx(CTX)?;
            tx.execute(
                "DELETE FROM api_conversations WHERE response_id NOT IN \
                 (SELECT response_id FROM api_responses)",
                &[],
            )
            .ctx(CTX)?;
            if let Some(name) = &conversation {
                tx.execute(
                    "INSERT INTO api_conversations (name, response_id) VALUES ($1, $2) \
                     ON CONFLICT (name) DO UPDATE SET response_id = EXCLUDED.response_id",
                    &[name, &id],
                )
                .ctx(CTX)?;
            }
            tx.commit().ctx(CTX)
        })?)
    }

    fn get(&self, id: &str) -> Result<Option<String>, StoreError> {
        let id = id.to_owned();
        Ok(self.with(move |c| {
            Ok::<_, PgError>(
                c.query_opt(
                    "UPDATE api_responses SET accessed_at = $2 WHERE response_id = $1 \
                     RETURNING data",
                    &[&id, &now()],
                )
                .ctx("reading a stored response")?
                .map(|r| dec(r.get(0))),
            )
        })?)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        Ok(self.with(move |c| {
            const CTX: &str = "deleting a stored response";
            let mut tx = c.transaction().ctx(CTX)?;
            tx.execute(
                "DELETE FROM api_conversations WHERE response_id = $1",
                &[&id],
            )
            .ctx(CTX)?;
            let gone = tx
                .execute("DELETE FROM api_responses WHERE response_id = $1", &[&id])
                .ctx(CTX)?;
            tx.commit().ctx(CTX)?;
            Ok::<_, PgError>(gone > 0)
        })?)
    }

    fn conversation(&self, name: &str) -> Result<Option<String>, StoreError> {
        let name = name.to_owned();
        Ok(self.with(move |c| {
            Ok::<_, PgError>(
                c.query_opt(
                    "SELECT response_id FROM api_conversations WHERE name = $1",
                    &[&name],
                )
                .ctx("reading a conversation")?
                .map(|r| r.get(0)),
            )
        })?)
    }
}
