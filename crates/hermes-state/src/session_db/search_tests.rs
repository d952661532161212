use hermes_protocol::{Message, ToolCall};

use super::super::test_support::{at, seed, session, temp_db};
use super::super::{SearchQuery, SearchSort, SessionDb};
use crate::session_db::DbError;

fn ids(db: &SessionDb, q: SearchQuery) -> Vec<i64> {
    db.search(&q)
        .unwrap()
        .into_iter()
        .map(|h| h.message_id)
        .collect()
}

fn q(text: &str) -> SearchQuery {
    SearchQuery::new(text)
}

fn corpus() -> (tempfile::TempDir, SessionDb, Vec<i64>) {
    let (dir, mut db) = temp_db();
    let mut all = seed(
        &mut db,
        "s1",
        1000.0,
        &[
            "How do I deploy the docker container?",        // 0 user
            "Use docker compose to deploy the stack.",      // 1 assistant
            "What about kubernetes deployment?",            // 2 user
            "Kubernetes needs a deployment manifest file.", // 3 assistant
            "Tell me about the Telegram gateway",           // 4 user
            "The Telegram bot uses long polling.",          // 5 assistant
        ],
    );
    all.extend(seed(
        &mut db,
        "s2",
        2000.0,
        &[
            "docker docker docker everywhere",
            "python is not java",
            "日本語のテキストです",
            "中文",
        ],
    ));
    (dir, db, all)
}

#[test]
fn simple_words_and_snippets() {
    let (_d, db, m) = corpus();
    let hits = db.search(&q("manifest")).unwrap();
    assert_eq!(hits.len(), 1);
    let h = &hits[0];
    assert_eq!(h.message_id, m[3]);
    assert_eq!(h.session_id, "s1");
    assert_eq!(h.role, "assistant");
    assert!(h.snippet.contains(">>>manifest<<<"), "{}", h.snippet);
    assert_eq!(h.session_source, "cli");
    assert_eq!(h.model.as_deref(), Some("test/model"));
    assert_eq!(h.timestamp, 1004.0);
    assert!(h.rank < 0.0, "bm25 ranks are negative");
}

#[test]
fn phrase_prefix_or_not() {
    let (_d, db, m) = corpus();
    assert_eq!(ids(&db, q("\"docker compose\"")), vec![m[1]]);
    assert_eq!(ids(&db, q("\"compose docker\"")), Vec::<i64>::new());
    let mut dep = ids(&db, q("deploy*"));
    dep.sort_unstable();
    assert_eq!(dep, vec![m[0], m[1], m[2], m[3]]);
    let mut or = ids(&db, q("manifest OR polling"));
    or.sort_unstable();
    assert_eq!(or, vec![m[3], m[5]]);
    assert_eq!(ids(&db, q("python NOT java")), Vec::<i64>::new());
    assert_eq!(ids(&db, q("python NOT ruby")), vec![m[7]]);
}

#[test]
fn bm25_ranks_more_occurrences_first() {
    let (_d, db, m) = corpus();
    let got = ids(&db, q("docker"));
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], m[6], "the message with three 'docker's ranks first");
    let hits = db.search(&q("docker")).unwrap();
    assert!(hits.windows(2).all(|w| w[0].rank <= w[1].rank));
}

#[test]
fn substring_via_trigram_when_no_word_matches() {
    let (_d, db, m) = corpus();
    let mut got = ids(&db, q("egra"));
    got.sort_unstable();
    assert_eq!(got, vec![m[4], m[5]]);
    let hits = db.search(&q("egra")).unwrap();
    assert!(
        hits[0].snippet.to_lowercase().contains(">>>egra<<<"),
        "{}",
        hits[0].snippet
    );
    // Words that match, just not on this page, do not fall back to substrings.
    assert_eq!(ids(&db, q("deploy")).len(), 2);
    assert!(
        ids(
            &db,
            SearchQuery {
                offset: 2,
                ..q("deploy")
            }
        )
        .is_empty()
    );
    // Too short for trigrams and no word match: nothing.
    assert!(ids(&db, q("eg")).is_empty());
}

#[test]
fn cjk_uses_trigram_and_like() {
    let (_d, db, m) = corpus();
    let hits = db.search(&q("日本語")).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message_id, m[8]);
    assert!(hits[0].snippet.contains("日本語"));
    // Two CJK characters: LIKE fallback.
    assert_eq!(ids(&db, q("中文")), vec![m[9]]);
    assert_eq!(ids(&db, q("テキ")), vec![m[8]]);
}

#[test]
fn filters_role_session_source() {
    let (_d, mut db, m) = corpus();
    let users = SearchQuery {
        role_filter: vec!["user".into()],
        ..q("docker")
    };
    let mut got = ids(&db, users);
    got.sort_unstable();
    assert_eq!(got, vec![m[0], m[6]]);
    let in_s1 = SearchQuery {
        session_id: Some("s1".into()),
        ..q("docker")
    };
    let mut got = ids(&db, in_s1);
    got.sort_unstable();
    assert_eq!(got, vec![m[0], m[1]]);
    let mut other = session("tg", 5000.0);
    other.source = "telegram".into();
    db.create_session(&other).unwrap();
    db.append_message("tg", &Message::user("docker on telegram"), &at(5001.0))
        .unwrap();
    let tg = SearchQuery {
        source_filter: vec!["telegram".into()],
        ..q("docker")
    };
    let hits = db.search(&tg).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_source, "telegram");
}

#[test]
fn sort_newest_oldest_and_paging() {
    let (_d, db, m) = corpus();
    let newest = ids(
        &db,
        SearchQuery {
            sort: SearchSort::Newest,
            ..q("docker")
        },
    );
    assert_eq!(newest, vec![m[6], m[1], m[0]]);
    let oldest = ids(
        &db,
        SearchQuery {
            sort: SearchSort::Oldest,
            ..q("docker")
        },
    );
    assert_eq!(oldest, vec![m[0], m[1], m[6]]);
    let page = ids(
        &db,
        SearchQuery {
            sort: SearchSort::Oldest,
            limit: 1,
            offset: 1,
            ..q("docker")
        },
    );
    assert_eq!(page, vec![m[1]]);
    assert!(
        ids(
            &db,
            SearchQuery {
                limit: 0,
                ..q("docker")
            }
        )
        .is_empty()
    );
}

#[test]
fn context_has_neighbours_truncated() {
    let (_d, mut db) = temp_db();
    let long = "z".repeat(500);
    seed(&mut db, "s", 10.0, &["first", "the unique target", &long]);
    let hits = db.search(&q("target")).unwrap();
    let ctx = &hits[0].context;
    assert_eq!(ctx.len(), 3);
    assert_eq!(ctx[0].content.as_deref(), Some("first"));
    assert_eq!(ctx[1].content.as_deref(), Some("the unique target"));
    assert_eq!(
        ctx[2].content.as_deref().map(|c| c.chars().count()),
        Some(200)
    );
    let first = db.search(&q("first")).unwrap();
    assert_eq!(first[0].context.len(), 2, "no message before the first one");
}

#[test]
fn tool_names_and_arguments_are_searchable() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    let mut call = Message::assistant("");
    call.content = None;
    call.tool_calls = vec![ToolCall::new(
        "c1",
        "web_search",
        "{\"query\": \"zeppelin history\"}",
    )];
    let a = db.append_message("s", &call, &at(2.0)).unwrap();
    let t = db
        .append_message(
            "s",
            &Message::tool_result("c1", "web_search", "results here"),
            &at(3.0),
        )
        .unwrap();
    assert_eq!(ids(&db, q("zeppelin")), vec![a]);
    let mut got = ids(&db, q("web_search"));
    got.sort_unstable();
    assert_eq!(got, vec![a, t]);
}

#[test]
fn rewound_rows_are_hidden_but_compacted_rows_found() {
    let (_d, db, m) = corpus();
    db.conn
        .execute("UPDATE messages SET active = 0 WHERE id = ?1", [m[3]])
        .unwrap();
    assert!(ids(&db, q("manifest")).is_empty());
    db.conn
        .execute("UPDATE messages SET compacted = 1 WHERE id = ?1", [m[3]])
        .unwrap();
    assert_eq!(ids(&db, q("manifest")), vec![m[3]]);
}

#[test]
fn a_hidden_row_in_the_top_k_does_not_shorten_the_page() {
    let (_d, db, m) = corpus();
    // The best "docker" match is rewound: the first top-2 pass yields one visible row, so the
    // search goes over every match and still fills the page, in rank order.
    db.conn
        .execute("UPDATE messages SET active = 0 WHERE id = ?1", [m[6]])
        .unwrap();
    let page = SearchQuery {
        limit: 2,
        ..q("docker")
    };
    let hits = db.search(&page).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.message_id != m[6]));
    assert!(hits[0].rank <= hits[1].rank);
    let second = SearchQuery {
        limit: 1,
        offset: 1,
        ..q("docker")
    };
    assert_eq!(ids(&db, second), vec![hits[1].message_id]);
}

#[test]
fn hostile_queries_never_leak_sql_errors() {
    let (_d, db, _m) = corpus();
    let long_word = "a".repeat(10_000);
    let long_mixed = "docker \" ( ) * : ^ ".repeat(600);
    let cases: Vec<&str> = vec![
        "\"unbalanced",
        "a\"b\"c\"",
        "\"\"\"\"\"",
        "AND",
        "OR",
        "NOT",
        "AND OR NOT",
        "docker AND",
        "OR docker",
        "; DROP TABLE messages; --",
        "'--",
        "x' OR '1'='1",
        "docker\0kubernetes",
        "\0",
        &long_word,
        &long_mixed,
        "*",
        "***",
        "**docker",
        "NEAR(",
        "NEAR(docker deploy)",
        "NEAR(docker deploy, 2)",
        "content:",
        "content:docker",
        "messages_fts:docker",
        "rank:1",
        "(",
        "((docker)",
        "{docker}",
        "docker + deploy",
        "^docker",
        "a OR OR b",
        "a AND NOT",
        "- leading",
        "$var 50% @user #tag",
        "url http://x.y/z?q=1&r=2",
        "\\",
        "%_%",
        "日本語\" OR \"",
        "\u{202e}reversed",
        "🎉🎉🎉",
        "   ",
        "",
    ];
    assert!(cases.len() >= 25);
    for case in &cases {
        match db.search(&q(case)) {
            Ok(_) => {}
            Err(DbError::InvalidQuery(msg)) => assert!(!msg.is_empty()),
            Err(other) => panic!("query {case:?} gave a non-query error: {other}"),
        }
    }
    // The tables are still intact and searchable afterwards.
    assert_eq!(db.message_count(None).unwrap(), 10);
    assert_eq!(ids(&db, q("manifest")).len(), 1);
    // Quoting fallback still finds literal words in otherwise unparseable input.
    assert_eq!(ids(&db, q("$manifest")).len(), 1);
}
