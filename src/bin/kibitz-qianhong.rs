//! The Qianhong plugin (QHPLUGIN V1.3): `-info` prints the plugin's description, `-plugin [debug]` plays on
//! stdin/stdout (`debug` traces the session to stderr; otherwise logging follows `KIBITZ_LOG`, default `warn`).
//! `-engine NAME [-engines FILE]` plays with that external engine of the engines file instead of kibitz's own.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    kibitz::protocols::engine::qianhong_main(&args)
}
