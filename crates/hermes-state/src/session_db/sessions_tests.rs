use hermes_protocol::Message;
use serde_json::json;

use super::super::test_support::{at, calling, seed, session, temp_db};
use super::super::{DbError, ListFilter, NewSession, SearchQuery, UsageDelta};
use super::now;

#[test]
fn create_get_and_enrich_on_conflict() {
    let (_d, mut db) = temp_db();
    let mut s = session("s1", 1234.5);
    s.model = None;
    s.cwd = Some("/work".into());
    s.model_config = Some(json!({"temperature": 0.5, "名前": "x"}));
    db.create_session(&s).unwrap();
    let row = db.get_session("s1").unwrap().unwrap();
    assert_eq!(row.source, "cli");
    assert_eq!(row.started_at, 1234.5);
    assert_eq!(row.model, None);
    assert_eq!(row.cwd.as_deref(), Some("/work"));
    assert_eq!(
        row.model_config.as_deref(),
        Some("{\"temperature\": 0.5, \"\\u540d\\u524d\": \"x\"}")
    );
    assert_eq!(
        (row.message_count, row.tool_call_count, row.input_tokens),
        (0, 0, 0)
    );
    assert!(!row.archived);

    // A second create fills NULLs only; it never overwrites.
    let again = NewSession {
        model: Some("late/model".into()),
        cwd: Some("/elsewhere".into()),
        source: "telegram".into(),
        started_at: 9999.0,
        ..session("s1", 0.0)
    };
    db.create_session(&again).unwrap();
    let row = db.get_session("s1").unwrap().unwrap();
    assert_eq!(row.model.as_deref(), Some("late/model"));
    assert_eq!(row.cwd.as_deref(), Some("/work"));
    assert_eq!(row.source, "cli");
    assert_eq!(row.started_at, 1234.5);
    assert!(db.get_session("nope").unwrap().is_none());
}

#[test]
fn empty_model_config_is_stored_as_null() {
    let (_d, mut db) = temp_db();
    let s = NewSession {
        model_config: Some(json!({})),
        ..session("s", 1.0)
    };
    db.create_session(&s).unwrap();
    assert_eq!(db.get_session("s").unwrap().unwrap().model_config, None);
}

#[test]
fn child_with_unknown_parent_is_refused() {
    let (_d, mut db) = temp_db();
    let s = NewSession {
        parent_session_id: Some("missing".into()),
        ..session("kid", 1.0)
    };
    assert!(matches!(db.create_session(&s), Err(DbError::NoSuchSession(p)) if p == "missing"));
}

#[test]
fn system_prompt_end_and_reopen() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.0)).unwrap();
    db.set_system_prompt("s", "You are Hermes.").unwrap();
    assert_eq!(
        db.get_session("s")
            .unwrap()
            .unwrap()
            .system_prompt
            .as_deref(),
        Some("You are Hermes.")
    );
    let before = now();
    db.end_session("s", "user_exit").unwrap();
    let row = db.get_session("s").unwrap().unwrap();
    assert!(row.ended_at.unwrap() >= before);
    assert_eq!(row.end_reason.as_deref(), Some("user_exit"));
    db.end_session("s", "other").unwrap();
    assert_eq!(
        db.get_session("s").unwrap().unwrap().end_reason.as_deref(),
        Some("user_exit")
    );
    db.reopen_session("s").unwrap();
    let row = db.get_session("s").unwrap().unwrap();
    assert_eq!((row.ended_at, row.end_reason), (None, None));
}

#[test]
fn titles_are_sanitised_unique_and_clearable() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("a", 1.0)).unwrap();
    db.create_session(&session("b", 2.0)).unwrap();
    assert!(db.set_title("a", "  My\u{200b}  \t Project\n").unwrap());
    assert_eq!(
        db.get_session("a").unwrap().unwrap().title.as_deref(),
        Some("My Project")
    );
    let err = db.set_title("b", "My Project").unwrap_err();
    assert!(
        matches!(&err, DbError::TitleTaken { session_id, .. } if session_id == "a"),
        "{err}"
    );
    assert!(
        db.set_title("a", "My Project").unwrap(),
        "a session may keep its own title"
    );
    assert!(matches!(
        db.set_title("a", &"x".repeat(101)),
        Err(DbError::InvalidTitle(_))
    ));
    assert!(db.set_title("a", "   ").unwrap());
    assert_eq!(db.get_session("a").unwrap().unwrap().title, None);
    assert!(db.set_title("b", "My Project").unwrap());
    assert!(!db.set_title("ghost", "anything").unwrap());
}

#[test]
fn title_moves_from_compression_ancestor() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("root", 1.0)).unwrap();
    db.set_title("root", "Long chat").unwrap();
    db.end_session("root", "compression").unwrap();
    let tip = NewSession {
        parent_session_id: Some("root".into()),
        ..session("tip", now() + 1.0)
    };
    db.create_session(&tip).unwrap();
    assert!(db.set_title("tip", "Long chat").unwrap());
    assert_eq!(db.get_session("root").unwrap().unwrap().title, None);
    assert_eq!(
        db.get_session("tip").unwrap().unwrap().title.as_deref(),
        Some("Long chat")
    );
}

#[test]
fn resolve_ids_and_titles() {
    let (_d, mut db) = temp_db();
    for (id, t) in [
        ("20240101_aaa1", 1.0),
        ("20240101_aaa2", 2.0),
        ("20240202_bbb", 3.0),
        ("x%_y", 4.0),
    ] {
        db.create_session(&session(id, t)).unwrap();
    }
    assert_eq!(
        db.resolve_session_id("20240202_bbb").unwrap().as_deref(),
        Some("20240202_bbb")
    );
    assert_eq!(
        db.resolve_session_id("202402").unwrap().as_deref(),
        Some("20240202_bbb")
    );
    assert_eq!(db.resolve_session_id("9999").unwrap(), None);
    assert_eq!(db.resolve_session_id("").unwrap(), None);
    assert_eq!(
        db.resolve_session_id("x%").unwrap().as_deref(),
        Some("x%_y")
    );
    assert_eq!(
        db.resolve_session_id("x_").unwrap(),
        None,
        "LIKE wildcards are escaped"
    );
    match db.resolve_session_id("20240101") {
        Err(DbError::Ambiguous { candidates, .. }) => {
            assert_eq!(
                candidates,
                vec!["20240101_aaa2".to_owned(), "20240101_aaa1".to_owned()]
            );
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }

    db.set_title("20240101_aaa1", "research").unwrap();
    assert_eq!(
        db.resolve_by_title("research").unwrap().as_deref(),
        Some("20240101_aaa1")
    );
    db.set_title("20240101_aaa2", "research #2").unwrap();
    db.set_title("20240202_bbb", "research #3").unwrap();
    assert_eq!(
        db.resolve_by_title("research").unwrap().as_deref(),
        Some("20240202_bbb")
    );
    assert_eq!(db.resolve_by_title("research_").unwrap(), None);
    assert_eq!(db.resolve_by_title("nothing").unwrap(), None);
}

#[test]
fn most_recent_prefers_activity_and_skips_subagents() {
    let (_d, mut db) = temp_db();
    seed(&mut db, "old", 100.0, &["hi"]);
    seed(&mut db, "new", 200.0, &[]);
    assert_eq!(db.most_recent(None).unwrap().unwrap().id, "new");
    db.append_message("old", &Message::user("later"), &at(500.0))
        .unwrap();
    assert_eq!(db.most_recent(None).unwrap().unwrap().id, "old");
    let sub = NewSession {
        parent_session_id: Some("old".into()),
        model_config: Some(json!({"_delegate_from": "old"})),
        ..session("sub", 600.0)
    };
    db.create_session(&sub).unwrap();
    db.append_message("sub", &Message::user("subagent work"), &at(700.0))
        .unwrap();
    assert_eq!(db.most_recent(None).unwrap().unwrap().id, "old");
    let mut tg = session("tg", 800.0);
    tg.source = "telegram".into();
    db.create_session(&tg).unwrap();
    assert_eq!(db.most_recent(None).unwrap().unwrap().id, "tg");
    assert_eq!(db.most_recent(Some("cli")).unwrap().unwrap().id, "old");
    assert!(db.most_recent(Some("discord")).unwrap().is_none());
}

#[test]
fn list_sessions_previews_filters_and_compression_projection() {
    let (_d, mut db) = temp_db();
    let long = format!("line one\nline two {}", "y".repeat(80));
    seed(&mut db, "a", 100.0, &[&long, "reply"]);
    seed(&mut db, "b", 200.0, &["short"]);
    let mut tg = session("tg", 300.0);
    tg.source = "telegram".into();
    db.create_session(&tg).unwrap();
    let sub = NewSession {
        parent_session_id: Some("b".into()),
        model_config: Some(json!({"_delegate_from": "b"})),
        ..session("sub", 400.0)
    };
    db.create_session(&sub).unwrap();

    let all = db.list_sessions(&ListFilter::default()).unwrap();
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["tg", "b", "a"]);
    let a = &all[2];
    assert_eq!(
        a.preview,
        format!("line one line two {}...", "y".repeat(42))
    );
    assert_eq!(a.last_active, 102.0);
    assert_eq!(a.message_count, 2);
    assert_eq!(all[0].last_active, 300.0);

    let with_kids = db
        .list_sessions(&ListFilter {
            include_children: true,
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(with_kids.len(), 4);
    let cli = db.list_sessions(&ListFilter {
        source: Some("cli".into()),
        limit: 1,
        offset: 1,
        ..ListFilter::default()
    });
    assert_eq!(
        cli.unwrap()
            .iter()
            .map(|s| s.id.clone())
            .collect::<Vec<_>>(),
        vec!["a"]
    );

    db.conn
        .execute("UPDATE sessions SET archived = 1 WHERE id = 'tg'", [])
        .unwrap();
    assert_eq!(db.list_sessions(&ListFilter::default()).unwrap().len(), 2);
    assert_eq!(
        db.list_sessions(&ListFilter {
            include_archived: true,
            ..ListFilter::default()
        })
        .unwrap()
        .len(),
        3
    );

    // Compression: the root is listed as its continuation.
    db.end_session("a", "compression").unwrap();
    let cont = NewSession {
        parent_session_id: Some("a".into()),
        ..session("a2", 150.0)
    };
    db.create_session(&cont).unwrap();
    db.append_message("a2", &Message::user("continued here"), &at(900.0))
        .unwrap();
    db.set_title("a2", "Continued").unwrap();
    let list = db.list_sessions(&ListFilter::default()).unwrap();
    let row = list.iter().find(|s| s.started_at == 100.0).unwrap();
    assert_eq!(row.id, "a2");
    assert_eq!(row.title.as_deref(), Some("Continued"));
    assert_eq!(row.preview, "continued here");
    assert_eq!(row.last_active, 900.0);
    assert_eq!(db.compression_tip("a").unwrap(), "a2");
    assert_eq!(db.compression_tip("b").unwrap(), "b");
}

#[test]
fn usage_accumulates_on_session_and_per_model() {
    let (_d, mut db) = temp_db();
    db.create_session(&NewSession {
        model: None,
        ..session("s", 1.0)
    })
    .unwrap();
    let u = UsageDelta {
        model: "anthropic/claude".into(),
        billing_provider: "openrouter".into(),
        billing_base_url: "https://openrouter.ai/api/v1".into(),
        input_tokens: 100,
        output_tokens: 20,
        cache_read_tokens: 5,
        cache_write_tokens: 3,
        reasoning_tokens: 7,
        api_calls: 1,
        estimated_cost_usd: Some(0.25),
        cost_status: Some("estimated".into()),
        cost_source: Some("official_docs_snapshot".into()),
        pricing_version: Some("v1".into()),
        billing_mode: None,
    };
    db.add_usage("s", &u).unwrap();
    db.add_usage(
        "s",
        &UsageDelta {
            model: "other/model".into(),
            ..u.clone()
        },
    )
    .unwrap();
    let row = db.get_session("s").unwrap().unwrap();
    assert_eq!(row.model.as_deref(), Some("anthropic/claude"));
    assert_eq!(row.billing_provider.as_deref(), Some("openrouter"));
    assert_eq!((row.input_tokens, row.output_tokens), (200, 40));
    assert_eq!(
        (
            row.cache_read_tokens,
            row.cache_write_tokens,
            row.reasoning_tokens
        ),
        (10, 6, 14)
    );
    assert_eq!(row.api_call_count, 2);
    assert_eq!(row.estimated_cost_usd, Some(0.5));
    let rows: Vec<(String, String, i64, i64, String, String)> = db
        .conn
        .prepare("SELECT model, billing_provider, input_tokens, api_call_count, billing_mode, task FROM session_model_usage WHERE session_id = 's' ORDER BY model")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].0, "anthropic/claude");
    assert_eq!((rows[0].2, rows[0].3), (100, 1));
    assert_eq!(rows[1].0, "other/model");
    assert_eq!((rows[0].4.as_str(), rows[0].5.as_str()), ("", ""));
    let costs: (String, String, String, String, f64) = db
        .conn
        .query_row(
            "SELECT s.cost_status, s.cost_source, s.pricing_version, u.cost_status, u.estimated_cost_usd \
             FROM sessions s JOIN session_model_usage u ON u.session_id = s.id \
             WHERE s.id = 's' AND u.model = 'anthropic/claude'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        (
            costs.0.as_str(),
            costs.1.as_str(),
            costs.2.as_str(),
            costs.3.as_str()
        ),
        ("estimated", "official_docs_snapshot", "v1", "estimated")
    );
    assert!((costs.4 - 0.25).abs() < 1e-12);

    // A zero delta changes nothing and records no usage row.
    db.add_usage("s", &UsageDelta::default()).unwrap();
    assert_eq!(db.get_session("s").unwrap().unwrap().api_call_count, 2);

    // Usage for an unknown session creates a placeholder row like the reference.
    db.add_usage("fresh", &u).unwrap();
    let fresh = db.get_session("fresh").unwrap().unwrap();
    assert_eq!(
        (fresh.source.as_str(), fresh.input_tokens),
        ("unknown", 100)
    );
}

#[test]
fn delete_cascades_delegates_and_detaches_others() {
    let (_d, mut db) = temp_db();
    seed(&mut db, "p", 1.0, &["parent"]);
    let delegate = NewSession {
        parent_session_id: Some("p".into()),
        model_config: Some(json!({"_delegate_from": "p"})),
        ..session("d", 2.0)
    };
    db.create_session(&delegate).unwrap();
    db.append_message("d", &Message::user("delegate msg"), &at(3.0))
        .unwrap();
    let branch = NewSession {
        parent_session_id: Some("p".into()),
        model_config: Some(json!({"_branched_from": "p"})),
        ..session("br", 4.0)
    };
    db.create_session(&branch).unwrap();
    db.add_usage(
        "p",
        &UsageDelta {
            input_tokens: 5,
            api_calls: 1,
            ..UsageDelta::default()
        },
    )
    .unwrap();

    assert!(db.delete_session("p").unwrap());
    assert!(!db.delete_session("p").unwrap());
    assert!(db.get_session("p").unwrap().is_none());
    assert!(db.get_session("d").unwrap().is_none());
    assert_eq!(
        db.get_session("br").unwrap().unwrap().parent_session_id,
        None
    );
    assert_eq!(db.message_count(None).unwrap(), 0);
    assert!(db.search(&SearchQuery::new("delegate")).unwrap().is_empty());
    let usage: i64 = db
        .conn
        .query_row("SELECT COUNT(*) FROM session_model_usage", [], |r| r.get(0))
        .unwrap();
    assert_eq!(usage, 0);
}

#[test]
fn prune_deletes_only_old_ended_sessions() {
    let (_d, mut db) = temp_db();
    seed(&mut db, "old_ended", 100.0, &["x"]);
    seed(&mut db, "old_live", 100.0, &["y"]);
    seed(&mut db, "new_ended", 10_000.0, &["z"]);
    let kid = NewSession {
        parent_session_id: Some("old_ended".into()),
        ..session("kid", 20_000.0)
    };
    db.create_session(&kid).unwrap();
    db.end_session("old_ended", "done").unwrap();
    db.end_session("new_ended", "done").unwrap();
    let before = |source: Option<&str>| crate::session_db::SessionFilter {
        started_before: Some(5_000.0),
        source: source.map(str::to_owned),
        ..Default::default()
    };
    assert_eq!(db.prune_matching(&before(Some("telegram"))).unwrap(), 0);
    assert_eq!(db.prune_matching(&before(None)).unwrap(), 1);
    assert!(db.get_session("old_ended").unwrap().is_none());
    assert!(db.get_session("old_live").unwrap().is_some());
    assert!(db.get_session("new_ended").unwrap().is_some());
    assert_eq!(
        db.get_session("kid").unwrap().unwrap().parent_session_id,
        None
    );
    assert_eq!(db.message_count(None).unwrap(), 2);
    // Sessions started "now" are never older than a day.
    assert_eq!(
        db.prune_sessions(1, None).unwrap(),
        1,
        "new_ended started in 1970"
    );
    assert_eq!(db.prune_sessions(1, None).unwrap(), 0);
}

#[test]
fn export_has_reference_shape() {
    let (_d, mut db) = temp_db();
    db.create_session(&session("s", 1.5)).unwrap();
    db.append_message("s", &Message::user("hello"), &at(2.0))
        .unwrap();
    db.append_message("s", &calling(1), &at(3.0)).unwrap();
    let v = db.export_session("s").unwrap().unwrap();
    assert_eq!(v["id"], "s");
    assert_eq!(v["started_at"], 1.5);
    assert_eq!(v["message_count"], 2);
    assert!(
        v.get("billing_mode").is_some(),
        "every sessions column is present"
    );
    let msgs = v["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["content"], "hello");
    assert_eq!(msgs[0]["active"], 1);
    assert_eq!(msgs[1]["tool_calls"][0]["function"]["name"], "read_file");
    assert!(db.export_session("none").unwrap().is_none());
}

#[test]
fn session_count_excludes_archived() {
    let (_d, mut db) = temp_db();
    assert_eq!(db.session_count().unwrap(), 0);
    seed(&mut db, "a", 1.0, &[]);
    seed(&mut db, "b", 2.0, &[]);
    assert_eq!(db.session_count().unwrap(), 2);
    db.conn
        .execute("UPDATE sessions SET archived = 1 WHERE id = 'a'", [])
        .unwrap();
    assert_eq!(db.session_count().unwrap(), 1);
}

#[test]
fn lineage_titles_are_numbered() {
    let (_d, mut db) = temp_db();
    assert_eq!(db.next_title_in_lineage("fix build").unwrap(), "fix build");
    db.create_session(&session("a", 1.0)).unwrap();
    db.set_title("a", "fix build").unwrap();
    assert_eq!(
        db.next_title_in_lineage("fix build").unwrap(),
        "fix build #2"
    );
    db.create_session(&session("b", 2.0)).unwrap();
    db.set_title("b", "fix build #2").unwrap();
    assert_eq!(
        db.next_title_in_lineage("fix build #2").unwrap(),
        "fix build #3"
    );
    // LIKE wildcards in the title match only themselves.
    assert_eq!(
        db.next_title_in_lineage("100% _done").unwrap(),
        "100% _done"
    );
}

#[test]
fn only_sessions_nothing_was_said_in_are_discarded() {
    let (_d, mut db) = temp_db();
    for id in ["empty", "talked", "titled", "parent"] {
        db.create_session(&session(id, 1.0)).unwrap();
    }
    db.append_message("talked", &Message::user("hi"), &Default::default())
        .unwrap();
    db.set_title("titled", "Kept by its title").unwrap();
    db.create_session(&NewSession {
        parent_session_id: Some("parent".into()),
        ..session("child", 2.0)
    })
    .unwrap();
    assert!(db.delete_if_empty("empty").unwrap());
    assert!(db.get_session("empty").unwrap().is_none());
    for id in ["talked", "titled", "parent"] {
        assert!(!db.delete_if_empty(id).unwrap(), "{id}");
        assert!(db.get_session(id).unwrap().is_some(), "{id}");
    }
    assert!(!db.delete_if_empty("no-such-session").unwrap());
}
