//! The CEBoard engine's entry points (the `IEngine` calls, as [`Command`]s) against a recording host. The
//! C ABI layer itself only copies C strings into these commands.
//!
//! Each input line is one call: its first byte picks the call and its flags, the rest is its text (a FEN or
//! a move). The host's clock always shows 50 ms left, so a search to play a move is short; an analysis runs
//! until the input's `MoveNow` or `EndGame`, or the final shutdown, which cancels it.
//!
//! Properties: the engine thread never stops on an internal error (a panic it caught), and every text it
//! hands the host can be a C string (no NUL).

use std::sync::{Arc, Mutex};

use kibitz::protocols::ceboard::{Command, Config, Engine, Feedback, Host, TimeControl};

/// Most calls one input makes.
const MAX_CALLS: usize = 64;

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn push(&self, text: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push(text.to_string());
        }
    }
}

impl Host for Recorder {
    fn engine_move(&mut self, mv: &str) {
        assert!(!mv.is_empty(), "an empty engine move");
        self.push(mv);
    }
    fn fatal_error(&mut self, reason: &str) {
        self.push(&format!("fatal: {reason}"));
    }
    fn game_finished(&mut self, result: &str, comment: &str) {
        self.push(result);
        self.push(comment);
    }
    fn who_plays(&mut self, name: &str) {
        self.push(name);
    }
    fn switch_sides(&mut self) {}
    fn show_thinking(&mut self, _show: bool) {}
    fn set_time_control(&mut self, _tc: &TimeControl) {}
    fn engine_feedback(&mut self, feedback: &Feedback) {
        self.push(&feedback.eval);
        self.push(&feedback.pv);
    }
    fn time_info(&mut self) -> (i32, i32, i32) {
        (50, 50, 0)
    }
}

/// One engine, the calls of one input, then shutdown.
pub fn calls(data: &[u8]) {
    let text = crate::text(data);
    let host = Recorder::default();
    let mut engine = Engine::start(Box::new(host.clone()), Config { seconds_per_move: 0, hash_mb: 1 })
        .expect("the engine thread starts");
    for line in text.lines().take(MAX_CALLS) {
        let mut chars = line.chars();
        let Some(first) = chars.next() else { continue };
        // The host passes C strings: a text ends at its first NUL.
        let rest: String = chars.take_while(|&c| c != '\0').collect();
        let code = u32::from(first);
        let flags = code / 6;
        let command = match code % 6 {
            0 => Command::StartGame {
                play_black: flags & 1 != 0,
                analyze: flags & 2 != 0,
                fen: (!rest.is_empty()).then_some(rest),
            },
            1 => Command::EndGame,
            2 => Command::SendMove(rest),
            3 => Command::SetPosition(rest),
            4 => Command::MoveNow,
            _ => Command::GetMessages(flags & 1 != 0),
        };
        engine.send(command);
    }
    engine.shutdown();
    let calls = host.0.lock().map(|v| v.clone()).unwrap_or_default();
    for call in &calls {
        assert!(!call.contains('\0'), "a text for the host holds a NUL: {call:?}");
        assert!(!call.contains("internal error"), "{call}");
    }
}
