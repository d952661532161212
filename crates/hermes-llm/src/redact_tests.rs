use super::*;

/// Input → expected output under the strict setting.
const STRICT_CASES: &[(&str, &str)] = &[
    // Vendor prefixes keep 6 leading and 4 trailing characters.
    (
        "key sk-proj-AbCdEf0123456789xyzXYZ bad",
        "key sk-pro...zXYZ bad",
    ),
    ("sk-ant-api03-abcdefghij1234567890", "sk-ant...7890"),
    (
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used",
        "token ghp_ab...6789 used",
    ),
    ("gho_abcdefghijklmnopqrstuvwxyz", "gho_ab...wxyz"),
    ("ghu_abcdefghijklmnopqrstuvwxyz", "ghu_ab...wxyz"),
    ("ghs_abcdefghijklmnopqrstuvwxyz", "ghs_ab...wxyz"),
    ("ghr_abcdefghijklmnopqrstuvwxyz", "ghr_ab...wxyz"),
    ("github_pat_11ABCDEFG0123456789_abcdefghij", "github...ghij"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIO...MPLE"),
    (
        "url ?x=AIzaSyA1234567890abcdefghijklmnopqrstu end",
        "url ?x=AIzaSy...rstu end",
    ),
    ("xoxb-1234567890-abcdefghij", "xoxb-1...ghij"),
    ("xoxp-1234567890-abcdefghij", "xoxp-1...ghij"),
    ("glpat-abcdefghij1234567890", "glpat-...7890"),
    ("hf_abcdefghijklmnopqrstuv", "hf_abc...stuv"),
    ("sk_live_abcdefghijklmnop1234", "sk_liv...1234"),
    ("npm_abcdefghijklmnopqrstu", "npm_ab...rstu"),
    // A short prefixed token is masked entirely.
    ("pplx-abcdefghij", "***"),
    // Environment-style assignments.
    (
        "OPENAI_API_KEY=abc123randomstringvalue42",
        "OPENAI_API_KEY=abc123...ue42",
    ),
    ("export GITHUB_TOKEN=hunter2", "export GITHUB_TOKEN=***"),
    (
        "DB_PASSWORD = \"hunter2hunter2hunter2\"",
        "DB_PASSWORD=\"hunter...ter2\"",
    ),
    ("MY_SECRET='s3cr3t'", "MY_SECRET='***'"),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
        "AWS_SECRET_ACCESS_KEY=wJalrX...DENG",
    ),
    // Dotted and line-anchored config keys.
    (
        "spring.datasource.password=hunter2",
        "spring.datasource.password=***",
    ),
    ("password=hunter2", "password=***"),
    ("  export api_key=abcdef", "  export api_key=***"),
    // YAML.
    (
        "api_key: abcdefghijklmnopqrstuvwxyz",
        "api_key: abcdef...wxyz",
    ),
    ("  password: hunter2", "  password: ***"),
    // JSON fields.
    (r#"{"password": "hunter2"}"#, r#"{"password": "***"}"#),
    (
        r#"{"api_key":"abcdefghijklmnopqrstuvwxyz","model":"x"}"#,
        r#"{"api_key": "abcdef...wxyz","model":"x"}"#,
    ),
    (r#"{"apiKey": "short"}"#, r#"{"apiKey": "***"}"#),
    (r#"{"client_secret": "xyz"}"#, r#"{"client_secret": "***"}"#),
    // Authorization headers and bearer tokens.
    (
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
        "Authorization: Bearer abcdef...wxyz",
    ),
    (
        "authorization: Basic dXNlcjpwYXNz",
        "authorization: Basic ***",
    ),
    (
        "curl -H \"Authorization: token abcdefghijklmnopqrstuvwxyz\"",
        "curl -H \"Authorization: token abcdef...wxyz\"",
    ),
    ("sent Bearer abcdefgh12345 twice", "sent Bearer *** twice"),
    (
        "x-api-key: abcdefghijklmnopqrstuvwxyz",
        "x-api-key: abcdef...wxyz",
    ),
    // JWTs.
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl here",
        "jwt eyJhbG...dXJl here",
    ),
    // Private keys.
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
        "[REDACTED PRIVATE KEY]",
    ),
    (
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\nok",
        "key:\n[REDACTED PRIVATE KEY]\nok",
    ),
    // Credentials in URLs.
    (
        "postgres://admin:hunter2@db.example.com:5432/app",
        "postgres://admin:***@db.example.com:5432/app",
    ),
    (
        "mongodb+srv://u:p4ss@cluster0.mongodb.net",
        "mongodb+srv://u:***@cluster0.mongodb.net",
    ),
    (
        "git clone https://abcdefgh12345678@github.com/o/r.git",
        "git clone https://***@github.com/o/r.git",
    ),
    (
        "GET https://user:pa55word@api.example.com/v1 failed",
        "GET https://user:***@api.example.com/v1 failed",
    ),
    (
        "https://api.example.com/cb?code=abc123&state=xyz",
        "https://api.example.com/cb?code=***&state=xyz",
    ),
    (
        "https://x.example.com/v1?key=opaque&page=2",
        "https://x.example.com/v1?key=***&page=2",
    ),
    ("x?token=abc&y=1", "x?token=***&y=1"),
    (
        "https://s3.example.com/f?X-Amz-Signature=deadbeef",
        "https://s3.example.com/f?X-Amz-Signature=***",
    ),
    // Form bodies.
    (
        "grant_type=refresh&refresh_token=abc&client_id=1",
        "grant_type=refresh&refresh_token=***&client_id=1",
    ),
    // Telegram bot tokens.
    (
        "bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        "bot123456789:***",
    ),
    // Phone numbers.
    ("call +15551234567 now", "call +155****4567 now"),
];

/// Text that must come out unchanged under the strict setting.
const UNCHANGED: &[&str] = &[
    "",
    "task-scheduler is busy",
    "max_tokens=4096 too many tokens",
    "use sk-short",
    "émoji ✓ sk-",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "/home/user/.ssh/id_ed25519.pub",
    "src/tokenizer/token_count.rs",
    "the token expired, ask for a new one",
    "I have a password reset meeting",
    "note: secret meeting at noon",
    "error: token expired",
    "session_id=42",
    "token_count: 17",
    "Authorization required",
    "KEY=os.getenv('OPENAI_API_KEY')",
    r#""apiKey": "process.env.API_KEY""#,
    "https://example.com/search?q=rust&page=2",
    "https://docs.rs/regex/latest/regex/",
    "ssh://git@github.com/o/r.git",
    "Bearer of bad news",
    "askdjf-1234",
    "version 1.2.3+build.7",
];

#[test]
fn strict_cases_mask_secrets() {
    for (input, expected) in STRICT_CASES {
        assert_eq!(redact_secrets(input), *expected, "input: {input:?}");
    }
}

#[test]
fn ordinary_text_survives() {
    for input in UNCHANGED {
        assert_eq!(redact_secrets(input), *input, "input: {input:?}");
    }
}

#[test]
fn every_pattern_compiles() {
    for re in [
        &PREFIX_RE,
        &ENV_ASSIGN_RE,
        &CFG_DOTTED_RE,
        &CFG_ANCHORED_RE,
        &YAML_ASSIGN_RE,
        &JSON_FIELD_RE,
        &AUTH_HEADER_RE,
        &BEARER_RE,
        &SECRET_HEADER_RE,
        &TELEGRAM_RE,
        &PRIVATE_KEY_RE,
        &DB_CONNSTR_RE,
        &URL_BARE_TOKEN_RE,
        &JWT_RE,
        &PHONE_RE,
        &URL_PARAM_RE,
        &URL_USERINFO_RE,
        &FORM_BODY_RE,
        &ENV_LOOKUP_RE,
    ] {
        assert!(re.is_some());
    }
}

#[test]
fn redaction_is_idempotent() {
    for (input, _) in STRICT_CASES {
        let once = redact_secrets(input);
        assert_eq!(redact_secrets(&once), once, "input: {input:?}");
    }
}

#[test]
fn code_files_keep_constants_but_not_keys() {
    let code = RedactOptions {
        code_file: true,
        url_credentials: false,
        non_reusable: false,
    };
    let cases = [
        ("MAX_TOKENS=100", "MAX_TOKENS=100"),
        (r#""apiKey": "test""#, r#""apiKey": "test""#),
        (
            r#"f"postgresql://{user}:{password}@{host}""#,
            r#"f"postgresql://{user}:{password}@{host}""#,
        ),
        (
            "client = OpenAI(api_key=\"sk-proj-AbCdEf0123456789xyzXYZ\")",
            "client = OpenAI(api_key=\"sk-pro...zXYZ\")",
        ),
        ("https://host/cb?code=abc123", "https://host/cb?code=abc123"),
    ];
    for (input, expected) in cases {
        assert_eq!(redact_with(input, code), expected, "input: {input:?}");
    }
}

#[test]
fn terminal_output_policy_follows_the_command() {
    let dump = "HOME=/root\nMY_SERVICE_TOKEN=abc123randomstringvalue42\n";
    assert_eq!(
        redact_terminal_output(dump, Some("env | sort")),
        "HOME=/root\nMY_SERVICE_TOKEN=abc123...ue42\n"
    );
    // Ordinary command output is treated as code: constants survive, keys do not.
    assert_eq!(
        redact_terminal_output("MAX_TOKENS=100", Some("cat config.py")),
        "MAX_TOKENS=100"
    );
    assert_eq!(
        redact_terminal_output("ghp_abcdefghijklmnopqrstuvwxyz0123456789", Some("cat x")),
        "ghp_ab...6789"
    );
    assert!(is_env_dump_command("printenv"));
    assert!(is_env_dump_command("cd /tmp && export"));
    assert!(is_env_dump_command("ls; declare -p"));
    assert!(!is_env_dump_command("echo env"));
    assert!(!is_env_dump_command("environment-check"));
}

#[test]
fn mask_token_lengths() {
    assert_eq!(mask_token(""), "***");
    assert_eq!(mask_token("abcdefghijklmnopq"), "***");
    assert_eq!(mask_token("abcdefghijklmnopqr"), "abcdef...opqr");
    assert_eq!(mask_token("ééééééééééééééééééé"), "éééééé...éééé");
}

#[test]
fn masking_stops_at_the_end_of_the_secret_and_never_eats_the_next_line() {
    let headers = "GET / HTTP/1.1\nAuthorization: Bearer\nX-Request-Id: 12345678\nHost: example.com\n\
                   Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345\nAccept: */*\n";
    let masked = redact_secrets(headers);
    assert!(masked.contains("\nX-Request-Id: 12345678\n"), "{masked}");
    assert!(masked.contains("\nHost: example.com\n"), "{masked}");
    assert!(
        masked.contains("Authorization: Bearer abcdef...2345\nAccept: */*"),
        "{masked}"
    );
    let dump = "HOME=/root\nOPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\nPATH=/usr/bin\n\
                GITHUB_TOKEN=\nUSER=root\nAWS_SECRET_ACCESS_KEY=abcdEFGHijklMNOPqrstUVWXyz0123456789\nTERM=xterm\n";
    let env = redact_terminal_output(dump, Some("env"));
    for kept in [
        "HOME=/root",
        "PATH=/usr/bin",
        "GITHUB_TOKEN=\n",
        "USER=root",
        "TERM=xterm",
    ] {
        assert!(env.contains(kept), "{kept} lost: {env}");
    }
    assert!(!env.contains("abcdefghijklmnopqrstuvwx"));
    assert!(!env.contains("ijklMNOPqrstUVWX"));
}

#[test]
fn file_reads_get_markers_that_cannot_pass_for_keys() {
    let text = "model: x\nkey: ghp_abcdefghijklmnopqrstuvwxyz0123\nMAX_TOKENS=100\nnext line\n";
    let out = redact_with(text, RedactOptions::FILE_READ);
    assert_eq!(
        out,
        "model: x\nkey: «redacted:ghp_…»\nMAX_TOKENS=100\nnext line\n"
    );
    assert_eq!(sentinel("SG.abcdefghijklmnop"), "«redacted:SG.…»");
    assert_eq!(sentinel("xoxb-1234567890-abc"), "«redacted:xox…»");
    assert_eq!(sentinel("opaque"), "«redacted-secret»");
    // Redacting again changes nothing.
    assert_eq!(redact_with(&out, RedactOptions::FILE_READ), out);
}

#[test]
fn env_files_mask_every_credential_assignment_and_nothing_around_it() {
    let text = "# db\nDB_HOST=db.internal\nDB_PASSWORD=hunter2hunter2\nSTRIPE_SECRET=whsec_1234567890abcdef\n\
                OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv\nPORT=5432\n";
    let out = redact_with(text, RedactOptions::ENV_FILE_READ);
    assert_eq!(
        out,
        "# db\nDB_HOST=db.internal\nDB_PASSWORD=«redacted-secret»\nSTRIPE_SECRET=«redacted-secret»\n\
         OPENAI_API_KEY=«redacted:sk-…»\nPORT=5432\n"
    );
    assert_eq!(redact_with(&out, RedactOptions::ENV_FILE_READ), out);
}

#[test]
fn env_like_file_names() {
    for name in [
        ".env",
        "/srv/app/.env.production",
        "prod.env",
        "~/.netrc",
        "C:\\x\\.envrc",
        "auth.json",
    ] {
        assert!(is_env_like_file(name), "{name}");
    }
    for name in ["env.rs", "environment.md", "README", "src/.environment"] {
        assert!(!is_env_like_file(name), "{name}");
    }
}
