//! `mws doctor` and OAuth: a token file open to other users fails the permission check with its
//! `chmod`, and a server that answers 401 "refuses the token" (or "needs a login" when mws holds
//! none) with `mws login` as the fix, instead of "not reachable".

use std::os::unix::fs::PermissionsExt;

use crate::doctor::{closed_port, doctor, fake_server, has, lines, setup};

const REFUSED: &str = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer \
                       error=\"invalid_token\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

fn tokens(url: &str) -> String {
    serde_json::json!({
        "resource": url, "issuer": "http://127.0.0.1:1", "tokenEndpoint": "http://127.0.0.1:1/token",
        "client": {"client_id": "c", "auth_method": "none"}, "accessToken": "at-secret",
        "scope": "read"
    })
    .to_string()
}

#[test]
fn an_open_token_file_and_a_refused_token_are_named() {
    let (port, _t) = fake_server(REFUSED, 20);
    let s = setup(port, closed_port(), r#", "transcripts": []"#);
    let file = s.state.join("oauth.json");
    std::fs::write(&file, tokens(&format!("http://127.0.0.1:{port}/mcp"))).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = doctor(&s.config, s.dir.path(), false);
    assert_eq!(out.status.code(), Some(1));
    let f = file.display();
    has(
        &out,
        &[
            "FAIL permissions 1 state file(s) readable by other users".into(),
            format!("{f} has mode 644"),
            format!("fix: chmod 600 {f}"),
        ],
    );
    let got = lines(&out);
    assert!(
        got.contains(&format!(
            "FAIL upstream http://127.0.0.1:{port}/mcp: refuses the token"
        )),
        "{}",
        got.join("\n")
    );
    assert!(
        got.contains(&"fix: run `mws login upstream`".to_string()),
        "{}",
        got.join("\n")
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("at-secret"));
}

#[test]
fn a_server_that_wants_a_login_is_not_called_unreachable() {
    let (port, _t) = fake_server(REFUSED, 20);
    let s = setup(closed_port(), closed_port(), "");
    std::fs::write(
        &s.config,
        format!(
            r#"{{"servers": {{"gh": {{"url": "http://127.0.0.1:{port}/mcp"}}}},
                "listen": {{"port": {}}}, "stateDir": "{}", "timeouts": {{"listMs": 300}},
                "transcripts": []}}"#,
            closed_port(),
            s.state.display()
        ),
    )
    .unwrap();
    let out = doctor(&s.config, s.dir.path(), false);
    let got = lines(&out);
    assert!(
        got.contains(&format!(
            "FAIL server gh (http://127.0.0.1:{port}/mcp): needs a login"
        )) && got.contains(&"fix: run `mws login gh`".to_string()),
        "{}",
        got.join("\n")
    );
}
