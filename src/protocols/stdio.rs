//! A line transport for the text protocols: a session state machine fed with input lines and search events,
//! its replies written to an output stream.
//!
//! One reader thread reads the input into lines of at most [`MAX_LINE`] bytes (or the limit of a
//! [`Transport`]; a longer line is discarded as it is read, never buffered, and answered with the session's
//! error line) and sends them into the session's channel, at most [`CHANNEL_CAPACITY`] of them waiting (the
//! reader then waits). Lines end at `\n`, or at whatever byte the session's [`LineSession::is_separator`] says
//! (GUIDE separates commands by any control character). When the input is a socket with a read timeout, each
//! timeout is handed to the session as [`LineSession::on_idle`] (a partly read line is kept). Search events
//! from the pool's workers go into the same channel through an [`EventSender`], so the session sees lines and
//! events in one order, on one thread. An event the session allows to be dropped (a progress report) is
//! dropped when [`CHANNEL_CAPACITY`] of them wait; any other event (the final answer, one a search) is queued
//! whatever waits: sending never blocks the pool's worker, so a peer that stops reading (its session blocked
//! writing, its lines piling up) cannot hold a worker that every other client shares. The loop hands each item
//! to the session and writes and flushes its reply. End of input behaves as the session says (usually like its
//! quit command); so does a read error.
//!
//! The session knows nothing of threads or streams, so the same code runs on stdin/stdout, on a socket and in
//! tests.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

/// The longest input line accepted, in bytes (without the line end).
pub const MAX_LINE: usize = 1 << 20;

/// Input items (lines) that may wait for the session, and droppable events (progress reports) likewise.
pub const CHANNEL_CAPACITY: usize = 256;

/// What a session answers to one line or event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// Output lines, without line ends.
    pub lines: Vec<String>,
    /// The session is over: write the lines and stop.
    pub quit: bool,
}

impl Reply {
    /// No output.
    pub fn none() -> Self {
        Reply::default()
    }

    /// One output line.
    pub fn line(line: impl Into<String>) -> Self {
        Reply { lines: vec![line.into()], quit: false }
    }

    /// Stop the session (after writing `lines`).
    pub fn quit(lines: Vec<String>) -> Self {
        Reply { lines, quit: true }
    }
}

/// A line protocol's session state machine.
pub trait LineSession {
    /// What the session's searches report back (delivered through an [`EventSender`]).
    type Event: Send + 'static;

    /// Lines written once, before any input is read.
    fn greeting(&mut self) -> Vec<String>;

    /// One input line (without its line end; possibly not valid UTF-8 in the source, replaced lossily).
    fn on_line(&mut self, line: &str) -> Reply;

    /// One event from a search.
    fn on_event(&mut self, event: Self::Event) -> Reply;

    /// An input line longer than [`MAX_LINE`] was discarded; `bytes` is its length.
    fn on_line_too_long(&mut self, bytes: usize) -> Reply;

    /// The input ended (or could not be read any more).
    fn on_end_of_input(&mut self) -> Reply;

    /// Whether `event` may be dropped when the channel is full (progress reports), rather than waited for.
    fn may_drop(event: &Self::Event) -> bool;

    /// Whether this input byte ends a line (`\n` unless the protocol says otherwise).
    fn is_separator(byte: u8) -> bool {
        byte == b'\n'
    }

    /// Nothing arrived for the transport's idle period (only when the input can time out, like a socket).
    fn on_idle(&mut self) -> Reply {
        Reply::none()
    }
}

/// How a session's input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transport {
    /// The longest input line accepted, in bytes.
    pub max_line: usize,
    /// The name of the reader thread.
    pub reader_name: &'static str,
}

impl Default for Transport {
    fn default() -> Self {
        Transport { max_line: MAX_LINE, reader_name: "kibitz-stdin" }
    }
}

/// What the loop receives.
enum Item<E> {
    Line(String),
    TooLong(usize),
    Idle,
    End,
    /// An event, and whether it counts among the droppable ones waiting.
    Event(E, bool),
}

/// The handle a session gives its searches to send events back into the loop. Cheap to clone.
pub struct EventSender<E> {
    tx: Sender<Item<E>>,
    may_drop: fn(&E) -> bool,
    /// Droppable events sent and not yet taken by the loop.
    waiting: Arc<AtomicUsize>,
}

impl<E> Clone for EventSender<E> {
    fn clone(&self) -> Self {
        EventSender { tx: self.tx.clone(), may_drop: self.may_drop, waiting: Arc::clone(&self.waiting) }
    }
}

impl<E: Send + 'static> EventSender<E> {
    /// Queue an event; never blocks. A droppable one is dropped while [`CHANNEL_CAPACITY`] of them wait; any
    /// other is always queued. Nothing happens once the loop has ended.
    pub fn send(&self, event: E) {
        let droppable = (self.may_drop)(&event);
        if droppable && self.waiting.fetch_add(1, Ordering::AcqRel) >= CHANNEL_CAPACITY {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            tracing::debug!("event queue full, a progress report dropped");
            return;
        }
        if self.tx.send(Item::Event(event, droppable)).is_err() && droppable {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// One read from the input.
#[derive(Debug, PartialEq, Eq)]
enum Read1 {
    /// A line is in the buffer.
    Line,
    /// A line of this many bytes was too long and has been skipped.
    TooLong(usize),
    /// Bytes of a line keep coming without its end for [`PARTIAL_TICK`]: the session is told as if the input
    /// had been idle (a line finished in dribs, a byte now and then, must not hold a session's idle limit off).
    /// The line so far is kept and reading goes on.
    Partial,
    End,
}

/// How long bytes of an unfinished line may keep coming before [`Read1::Partial`] is reported.
const PARTIAL_TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// Splits an input into bounded lines. A read error leaves a partly read line in place, so reading may go on
/// after a timeout.
struct LineReader {
    buf: Vec<u8>,
    /// Bytes of the current line so far (kept or not).
    total: usize,
    /// Some byte of the current line was read.
    any: bool,
    max: usize,
    sep: fn(u8) -> bool,
    /// When the last thing was reported (a line, or [`Read1::Partial`]).
    reported: std::time::Instant,
}

impl LineReader {
    fn new(max: usize, sep: fn(u8) -> bool) -> Self {
        LineReader { buf: Vec::new(), total: 0, any: false, max, sep, reported: std::time::Instant::now() }
    }

    /// Read one line into `self.buf` (the separator removed, and a `\r` before a `\n`), keeping at most `max`
    /// bytes: the rest of a longer line is read and discarded.
    fn next(&mut self, input: &mut impl BufRead) -> io::Result<Read1> {
        loop {
            let chunk = match input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                // End of input: a last line without a line end still counts.
                let any = std::mem::take(&mut self.any);
                let total = std::mem::take(&mut self.total);
                return Ok(if !any {
                    Read1::End
                } else if total > self.max {
                    Read1::TooLong(total)
                } else {
                    Read1::Line
                });
            }
            if !self.any {
                self.buf.clear();
            }
            self.any = true;
            let sep = self.sep;
            let (part, used, ended) = match chunk.iter().position(|&b| sep(b)) {
                Some(i) => (&chunk[..i], i + 1, Some(chunk[i])),
                None => (chunk, chunk.len(), None),
            };
            self.total = self.total.saturating_add(part.len());
            if self.total <= self.max {
                self.buf.extend_from_slice(part);
            } else if !self.buf.is_empty() {
                self.buf.clear();
                self.buf.shrink_to(4096);
            }
            input.consume(used);
            if let Some(end) = ended {
                let total = std::mem::take(&mut self.total);
                self.any = false;
                self.reported = std::time::Instant::now();
                if end == b'\n' && self.buf.last() == Some(&b'\r') && total <= self.max {
                    self.buf.pop();
                }
                return Ok(if total > self.max { Read1::TooLong(total) } else { Read1::Line });
            }
            if self.reported.elapsed() >= PARTIAL_TICK {
                self.reported = std::time::Instant::now();
                return Ok(Read1::Partial);
            }
        }
    }
}

/// The reader's way into the session's channel: each item first takes a place of the [`CHANNEL_CAPACITY`]
/// (`places`, a bounded channel of tokens the loop takes back), so the reader waits while that many wait.
struct ReaderTx<E> {
    tx: Sender<Item<E>>,
    places: SyncSender<()>,
}

impl<E> ReaderTx<E> {
    /// Queue an item once a place is free; false when the loop has ended.
    fn send(&self, item: Item<E>) -> bool {
        self.places.send(()).is_ok() && self.tx.send(item).is_ok()
    }
}

/// The reader thread: lines into the channel until the input ends or the loop goes away. A read that times
/// out (a socket's read timeout) is reported as idle, and reading goes on.
fn read_lines<E>(input: impl Read, tx: ReaderTx<E>, max: usize, sep: fn(u8) -> bool) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut reader = LineReader::new(max, sep);
    // When the session was last told of the time passing (see below).
    let mut ticked = std::time::Instant::now();
    loop {
        // Lines that keep coming (empty ones, say) still let the session look at its idle limit every
        // [`PARTIAL_TICK`]: only it knows which lines are commands.
        if ticked.elapsed() >= PARTIAL_TICK {
            ticked = std::time::Instant::now();
            if !tx.send(Item::Idle) {
                return;
            }
        }
        let item = match reader.next(&mut input) {
            Ok(Read1::Line) => Item::Line(String::from_utf8_lossy(&reader.buf).into_owned()),
            Ok(Read1::TooLong(n)) => Item::TooLong(n),
            Ok(Read1::Partial) => {
                ticked = std::time::Instant::now();
                Item::Idle
            }
            Ok(Read1::End) => Item::End,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                ticked = std::time::Instant::now();
                Item::Idle
            }
            Err(e) => {
                tracing::debug!("input unreadable: {e}");
                Item::End
            }
        };
        let end = matches!(item, Item::End);
        if !tx.send(item) || end {
            return;
        }
    }
}

fn write_lines(output: &mut impl Write, lines: &[String]) -> io::Result<()> {
    for line in lines {
        tracing::debug!(target: "kibitz::protocol", "> {line}");
        output.write_all(line.as_bytes())?;
        output.write_all(b"\n")?;
    }
    output.flush()
}

/// Run a session: `make` builds it with the sender its searches report through; lines are read from `input`
/// on a thread of their own (which is left blocked in its read if the session quits first: give it a stream
/// that may outlive the call, like stdin), replies go to `output`, flushed after each. Returns when the
/// session quits, or with the error that writing the output failed with.
pub fn run<S, M>(make: M, input: impl Read + Send + 'static, output: &mut impl Write) -> io::Result<()>
where
    S: LineSession,
    M: FnOnce(EventSender<S::Event>) -> S,
{
    run_with(make, input, output, Transport::default())
}

/// [`run`] with the transport's settings: the line limit and the reader thread's name. `input` may be a
/// socket with a read timeout (each timeout goes to [`LineSession::on_idle`]); a socket should also have a
/// write timeout, so that a peer that stops reading cannot block the session for ever.
pub fn run_with<S, M>(
    make: M,
    input: impl Read + Send + 'static,
    output: &mut impl Write,
    transport: Transport,
) -> io::Result<()>
where
    S: LineSession,
    M: FnOnce(EventSender<S::Event>) -> S,
{
    let (tx, rx) = mpsc::channel::<Item<S::Event>>();
    let (places, taken): (SyncSender<()>, Receiver<()>) = mpsc::sync_channel(CHANNEL_CAPACITY);
    let waiting = Arc::new(AtomicUsize::new(0));
    let mut session = make(EventSender { tx: tx.clone(), may_drop: S::may_drop, waiting: Arc::clone(&waiting) });
    write_lines(output, &session.greeting())?;
    let max = transport.max_line;
    let reader = ReaderTx { tx, places };
    std::thread::Builder::new()
        .name(transport.reader_name.into())
        .spawn(move || read_lines(input, reader, max, S::is_separator))?;
    let result = loop {
        // The session holds a sender, so the channel never disconnects while it lives.
        let Ok(item) = rx.recv() else { break Ok(()) };
        match &item {
            Item::Event(_, true) => {
                waiting.fetch_sub(1, Ordering::AcqRel);
            }
            Item::Event(_, false) => {}
            // The reader's item: its place is free again.
            _ => {
                let _ = taken.try_recv();
            }
        }
        let reply = match item {
            Item::Line(line) => {
                tracing::debug!(target: "kibitz::protocol", "< {line}");
                session.on_line(&line)
            }
            Item::TooLong(n) => session.on_line_too_long(n),
            Item::Idle => session.on_idle(),
            Item::End => session.on_end_of_input(),
            Item::Event(e, _) => session.on_event(e),
        };
        if let Err(e) = write_lines(output, &reply.lines) {
            break Err(e);
        }
        if reply.quit {
            break Ok(());
        }
    };
    // Close the channels first: the reader, waiting for a place, wakes up and ends; a search sending its final
    // answer finds the channel closed.
    drop(rx);
    drop(taken);
    drop(session);
    result
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    #[test]
    fn lines_are_split_trimmed_and_bounded() {
        let text = b"abc\r\n\nxyz0123456789\nlast".to_vec();
        let mut input = BufReader::with_capacity(4, Cursor::new(text));
        let mut r = LineReader::new(8, |b| b == b'\n');
        assert_eq!(r.next(&mut input).ok(), Some(Read1::Line));
        assert_eq!(r.buf, b"abc");
        assert_eq!(r.next(&mut input).ok(), Some(Read1::Line));
        assert_eq!(r.buf, b"");
        assert_eq!(r.next(&mut input).ok(), Some(Read1::TooLong(13)));
        assert!(r.buf.is_empty());
        assert_eq!(r.next(&mut input).ok(), Some(Read1::Line));
        assert_eq!(r.buf, b"last");
        assert_eq!(r.next(&mut input).ok(), Some(Read1::End));
    }

    /// Reads what it is given, then fails with a timeout once, then reads the rest.
    struct Stutter(Vec<&'static [u8]>);

    impl Read for Stutter {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let part = self.0.remove(0);
            if part.is_empty() {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "timeout"));
            }
            out[..part.len()].copy_from_slice(part);
            Ok(part.len())
        }
    }

    #[test]
    fn any_separator_and_a_timeout_inside_a_line() {
        let mut input = BufReader::new(Stutter(vec![b"ping a\x00new\tgo", b"", b" 1 2\r\n"]));
        let mut r = LineReader::new(100, |b| b < 32);
        let mut got = Vec::new();
        loop {
            match r.next(&mut input) {
                Ok(Read1::Line) => got.push(String::from_utf8_lossy(&r.buf).into_owned()),
                Ok(Read1::End) => break,
                Ok(Read1::TooLong(n)) => panic!("too long {n}"),
                Ok(Read1::Partial) => got.push("(partial)".into()),
                Err(e) => got.push(format!("({:?})", e.kind())),
            }
        }
        assert_eq!(got, ["ping a", "new", "(WouldBlock)", "go 1 2", ""]);
    }

    #[test]
    fn a_line_in_dribs_is_reported_as_partial_and_then_whole() {
        // A byte at a time, slower than the tick: the session hears of the time passing, and the line is whole.
        struct Slow(Vec<u8>);
        impl Read for Slow {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Ok(0);
                }
                std::thread::sleep(PARTIAL_TICK / 2 + std::time::Duration::from_millis(10));
                out[0] = self.0.remove(0);
                Ok(1)
            }
        }
        let mut input = BufReader::new(Slow(b"go\n".to_vec()));
        let mut r = LineReader::new(100, |b| b == b'\n');
        let mut got = Vec::new();
        loop {
            match r.next(&mut input) {
                Ok(Read1::Line) => got.push(String::from_utf8_lossy(&r.buf).into_owned()),
                Ok(Read1::Partial) => got.push("(partial)".into()),
                Ok(Read1::End) => break,
                other => panic!("{other:?}"),
            }
        }
        // At least one tick (the two bytes before the end take over the tick), maybe more on a slow machine.
        let (last, before) = got.split_last().expect("something read");
        assert_eq!(last, "go");
        assert!(!before.is_empty() && before.iter().all(|g| g == "(partial)"), "{got:?}");
    }

    /// Echoes lines and events, quits on `q`.
    struct Echo;

    impl LineSession for Echo {
        type Event = u32;

        fn greeting(&mut self) -> Vec<String> {
            vec!["HELLO".into()]
        }

        fn on_line(&mut self, line: &str) -> Reply {
            match line {
                "q" => Reply::quit(vec!["BYE".into()]),
                _ => Reply::line(format!("ECHO {line}")),
            }
        }

        fn on_event(&mut self, event: u32) -> Reply {
            Reply::line(format!("EVENT {event}"))
        }

        fn on_line_too_long(&mut self, bytes: usize) -> Reply {
            Reply::line(format!("TOOLONG {bytes}"))
        }

        fn on_end_of_input(&mut self) -> Reply {
            Reply::quit(vec!["EOF".into()])
        }

        fn may_drop(_: &u32) -> bool {
            false
        }
    }

    fn transcript(input: &str, max: usize) -> String {
        let mut out = Vec::new();
        let input = Cursor::new(input.as_bytes().to_vec());
        // An event sent before the reader starts comes before every line.
        let make = |tx: EventSender<u32>| {
            tx.send(7);
            Echo
        };
        run_with(make, input, &mut out, Transport { max_line: max, ..Transport::default() }).expect("runs");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_loop_feeds_lines_and_events_and_stops_on_quit() {
        assert_eq!(transcript("a\nq\nnever\n", 100), "HELLO\nEVENT 7\nECHO a\nBYE\n");
    }

    #[test]
    fn end_of_input_and_long_lines_go_to_the_session() {
        let long = "x".repeat(50);
        assert_eq!(transcript(&format!("{long}\nb"), 10), "HELLO\nEVENT 7\nTOOLONG 50\nECHO b\nEOF\n");
    }

    /// Found by an audit: a GUIDE client that stopped reading blocked its session's loop, its lines filled the
    /// channel, and the search's final answer then blocked the pool's worker that sent it, stalling every
    /// other client's searches for half a minute. Final answers are now queued without waiting.
    #[test]
    fn progress_is_dropped_when_many_wait_but_final_answers_never_block() {
        let (tx, rx) = mpsc::channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let sender = EventSender { tx, may_drop: |e: &u32| *e < 1000, waiting: Arc::clone(&waiting) };
        for i in 0..CHANNEL_CAPACITY as u32 + 5 {
            sender.send(i);
        }
        // On this thread: nothing reads the channel, and the final answers do not wait.
        for i in 0..CHANNEL_CAPACITY as u32 * 2 {
            sender.send(1000 + i);
        }
        let got: Vec<(u32, bool)> = rx
            .try_iter()
            .filter_map(|item| match item {
                Item::Event(e, droppable) => Some((e, droppable)),
                _ => None,
            })
            .collect();
        assert_eq!(got.len(), CHANNEL_CAPACITY * 3);
        assert!(got[..CHANNEL_CAPACITY].iter().enumerate().all(|(i, &(e, d))| e == i as u32 && d));
        assert!(got[CHANNEL_CAPACITY..].iter().all(|&(e, d)| e >= 1000 && !d));
        assert_eq!(waiting.load(Ordering::Acquire), CHANNEL_CAPACITY);
        drop(rx);
        sender.send(200);
        sender.send(2000);
        assert_eq!(waiting.load(Ordering::Acquire), CHANNEL_CAPACITY, "a failed send holds no place");
    }

    /// The reader waits while [`CHANNEL_CAPACITY`] of its lines wait for a session that is busy (writing to a
    /// peer that does not read), and goes on when the loop takes them.
    #[test]
    fn the_reader_waits_for_places() {
        let lines: String = (0..CHANNEL_CAPACITY + 10).map(|i| format!("{i}\n")).collect();
        let (tx, rx) = mpsc::channel::<Item<u32>>();
        let (places, taken) = mpsc::sync_channel(CHANNEL_CAPACITY);
        let reader = std::thread::spawn(move || {
            read_lines(Cursor::new(lines.into_bytes()), ReaderTx { tx, places }, 100, |b| b == b'\n')
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut first = 0;
        while first < CHANNEL_CAPACITY && std::time::Instant::now() < deadline {
            first += rx.try_iter().count();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        first += rx.try_iter().count();
        assert_eq!(first, CHANNEL_CAPACITY, "the reader stops when every place is taken");
        // The loop takes the places back: the rest comes, then the end.
        for _ in 0..first {
            let _ = taken.try_recv();
        }
        let mut rest = 0;
        while let Ok(item) = rx.recv_timeout(std::time::Duration::from_secs(10)) {
            let _ = taken.try_recv();
            rest += 1;
            if matches!(item, Item::End) {
                break;
            }
        }
        assert!(reader.join().is_ok());
        assert_eq!(first + rest, CHANNEL_CAPACITY + 11, "every line and the end");
    }
}
