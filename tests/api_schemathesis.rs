//! The HTTP API against its own OpenAPI document, driven by schemathesis (PyPI): generated requests for every
//! operation (valid, invalid and stateful sequences), checking that no answer is a server error and that every
//! answer fits the document (status codes, content types, headers, bodies). Schema-valid requests the server
//! rejects are not counted: the document cannot say that a format name must be one the chosen game has.
//!
//! Runs with `KIBITZ_ORACLE=1` (as CI runs the tests, after installing schemathesis); skipped otherwise.

mod common;

use std::process::Command;

use common::Server;

#[test]
fn schemathesis_finds_no_server_error_and_no_answer_outside_the_document() {
    if std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1") {
        eprintln!("KIBITZ_ORACLE is not 1: the schemathesis run is skipped");
        return;
    }
    let server = Server::start(&["--max-depth", "8", "--max-movetime-ms", "2000", "--max-nodes", "2000000"]);
    let base = format!("http://{}", server.addr);
    let out = Command::new("schemathesis")
        .args(["run", &format!("{base}/v1/openapi.json"), "--url", &base])
        .args(["--checks", "all", "--exclude-checks", "positive_data_acceptance"])
        .args(["--max-examples", "40", "--request-timeout", "60", "--no-color"])
        .env("SCHEMATHESIS_HOOKS", "")
        // schemathesis keeps a cache in its working directory: not in the repository.
        .current_dir(std::env::temp_dir())
        .output()
        .expect("KIBITZ_ORACLE=1 but schemathesis could not be run (pip install schemathesis)");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "schemathesis found problems:\n{report}\nserver stderr:\n{}", server.stderr());
    // The run reached the operations (a run that tested nothing would also exit 0).
    assert!(report.contains("Tested: "), "{report}");
    server.stop();
}
