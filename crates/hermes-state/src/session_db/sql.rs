//! SQL fragments shared by several queries (child-session classification), mirroring the
//! reference's definitions so listings and deletes agree on which rows are which.

/// `json_extract` of the `_delegate_from` marker in `col`.
pub(crate) fn delegate_from(col: &str) -> String {
    format!("json_extract(COALESCE({col}, '{{}}'), '$._delegate_from')")
}

/// A `/branch` child: the stable marker, or the legacy "parent ended as branched" heuristic.
pub(crate) fn branch_child(a: &str) -> String {
    format!(
        "json_extract(COALESCE({a}.model_config, '{{}}'), '$._branched_from') IS NOT NULL \
         OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = {a}.parent_session_id \
         AND p.end_reason = 'branched' AND {a}.started_at >= p.ended_at)"
    )
}

/// A compression continuation: the parent ended with `end_reason = 'compression'`.
pub(crate) fn compression_child(a: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM sessions p WHERE p.id = {a}.parent_session_id \
         AND p.end_reason = 'compression')"
    )
}

/// Rows that show up in pickers: roots and branch children.
pub(crate) fn listable_child(a: &str) -> String {
    format!("({a}.parent_session_id IS NULL OR {})", branch_child(a))
}

/// Subagent runs: a parent, but neither a branch nor a compression continuation.
pub(crate) fn ephemeral_child(a: &str) -> String {
    format!(
        "({a}.parent_session_id IS NOT NULL AND NOT ({}) AND NOT ({}))",
        branch_child(a),
        compression_child(a)
    )
}

/// Escapes `\`, `%` and `_` for `LIKE … ESCAPE '\'`.
pub fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}
