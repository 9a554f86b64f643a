//! The C ABI of the CEBoard engine interface: `LoadEngine`, the `IEngine` object the host calls and the
//! `ICEBoard20` object the engine calls, laid out as the C++ interfaces of the spec (`include/ceboard.h`).
//!
//! Layout: a C++ object with virtual functions and no base class starts with a pointer to its table of
//! functions, in declaration order (no virtual destructor, so no extra slots). On x86-64 (System V and
//! Windows) and AArch64 a member function takes `this` as its first argument with the C calling convention,
//! so the tables hold `extern "C"` function pointers. (32-bit Windows would need `thiscall`.)
//!
//! Types as on Windows CE: `BOOL` = `i32`, `DWORD` = `u32`, `HWND`/`HMENU` = pointers, `WPARAM`/`LPARAM` =
//! pointer-sized integers, `LPCTSTR` = NUL-terminated UTF-16 (`char16_t`), `LPCSTR` = NUL-terminated bytes
//! (`EngineFeedback` only).
//!
//! Memory: `LoadEngine` allocates the `IEngine` object; `Release` frees it (the host never deletes it) and
//! it must not be used afterwards. Strings passed either way are borrowed for the duration of the call only:
//! the engine copies the host's, the host must copy the engine's. No panic crosses the boundary: every entry
//! point runs under `catch_unwind`.

use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Command, Config, ENGINE_NAME, Engine, Feedback, Host, TimeControl};

pub type Bool = i32;
pub type Dword = u32;
pub const TRUE: Bool = 1;
pub const FALSE: Bool = 0;

/// `ENGINE_INTERFACE_VERSION`.
pub const ENGINE_INTERFACE_VERSION: Dword = 2;
/// `MOVES_UCI`: the engine reads and writes coordinates.
pub const MOVES_UCI: Dword = 1;
/// The longest string read from the host, in UTF-16 units (longer ones are cut).
const MAX_HOST_STRING: usize = 4096;

/// `EngineProperties`.
#[repr(C)]
pub struct EngineProperties {
    pub dw_size: Dword,
    pub dw_version: Dword,
    pub dw_caps: Dword,
    pub s_engine_name: [u16; 32],
}

/// The function table of `ICEBoard20`, in the spec's order.
#[repr(C)]
pub struct ICEBoard20Vtbl {
    pub engine_move: unsafe extern "C" fn(this: *mut ICEBoard20, mv: *const u16),
    pub fatal_error: unsafe extern "C" fn(this: *mut ICEBoard20, error: *const u16),
    pub game_finished: unsafe extern "C" fn(this: *mut ICEBoard20, result: *const u16, comment: *const u16),
    pub who_plays: unsafe extern "C" fn(this: *mut ICEBoard20, player: *const u16),
    pub switch_sides: unsafe extern "C" fn(this: *mut ICEBoard20),
    pub show_thinking: unsafe extern "C" fn(this: *mut ICEBoard20, show: Bool),
    pub set_time_control: unsafe extern "C" fn(
        this: *mut ICEBoard20,
        sec_by_move: c_int,
        moves1: c_int,
        sec1: c_int,
        moves2: c_int,
        sec2: c_int,
        sec3: c_int,
        inc: c_int,
    ),
    pub engine_feedback: unsafe extern "C" fn(
        this: *mut ICEBoard20,
        depth: c_int,
        nodes_sec: c_int,
        total_nodes: c_int,
        time: c_int,
        eval: *const c_char,
        variante: *const c_char,
    ),
    pub get_time_info:
        unsafe extern "C" fn(this: *mut ICEBoard20, wtime: *mut c_int, btime: *mut c_int, movestogo: *mut c_int),
}

/// The host's object: its first word points to its function table.
#[repr(C)]
pub struct ICEBoard20 {
    pub vtbl: *const ICEBoard20Vtbl,
}

/// The function table of `IEngine`, in the spec's order.
#[repr(C)]
pub struct IEngineVtbl {
    pub get_properties: unsafe extern "C" fn(this: *mut IEngine, props: *mut EngineProperties) -> Bool,
    pub start_game: unsafe extern "C" fn(this: *mut IEngine, play_black: Bool, analyze: Bool, fen: *const u16),
    pub end_game: unsafe extern "C" fn(this: *mut IEngine),
    pub release: unsafe extern "C" fn(this: *mut IEngine),
    pub send_move: unsafe extern "C" fn(this: *mut IEngine, mv: *const u16),
    pub show_options: unsafe extern "C" fn(this: *mut IEngine, hwnd: *mut c_void) -> Bool,
    pub get_menu: unsafe extern "C" fn(this: *mut IEngine) -> *mut c_void,
    pub handle_command:
        unsafe extern "C" fn(this: *mut IEngine, hwnd: *mut c_void, wparam: usize, lparam: isize) -> Bool,
    pub set_position: unsafe extern "C" fn(this: *mut IEngine, fen: *const u16),
    pub move_now: unsafe extern "C" fn(this: *mut IEngine),
    pub is_alive: unsafe extern "C" fn(this: *mut IEngine) -> Bool,
    pub get_messages: unsafe extern "C" fn(this: *mut IEngine, want: Bool),
}

/// The engine's object: the table pointer first (what the host sees), then the engine.
#[repr(C)]
pub struct IEngine {
    vtbl: *const IEngineVtbl,
    engine: Engine,
}

/// The function table as C++ compilers lay one out (Itanium C++ ABI, 2.5): two words before the functions, the
/// offset to the object's top and its type information, which a host reads for `dynamic_cast` or `typeid` or
/// a sanitizer's checks. Ours are those of a class compiled without run-time type information (0 and null);
/// the object points at the first function, as C++ does.
#[repr(C)]
struct PrefixedVtbl {
    offset_to_top: isize,
    type_info: usize,
    table: IEngineVtbl,
}

static IENGINE_TABLE: PrefixedVtbl = PrefixedVtbl { offset_to_top: 0, type_info: 0, table: IENGINE_VTBL };

const IENGINE_VTBL: IEngineVtbl = IEngineVtbl {
    get_properties,
    start_game,
    end_game,
    release,
    send_move,
    show_options,
    get_menu,
    handle_command,
    set_position,
    move_now,
    is_alive,
    get_messages,
};

/// UTF-16, NUL-terminated.
fn to_utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// Bytes, NUL-terminated; characters outside ASCII become `?` (the host reads them as ANSI).
fn to_ansi(s: &str) -> Vec<u8> {
    s.chars().map(|c| if c.is_ascii() && c != '\0' { c as u8 } else { b'?' }).chain(std::iter::once(0)).collect()
}

/// Read a host string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated UTF-16 string (reading stops at [`MAX_HOST_STRING`] units).
unsafe fn from_utf16(p: *const u16) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: the caller guarantees a NUL-terminated string; we read unit by unit up to the NUL (or the cap),
    // never past it.
    while len < MAX_HOST_STRING && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` units before the NUL were just read, so they are valid for reads.
    let units = unsafe { std::slice::from_raw_parts(p, len) };
    Some(String::from_utf16_lossy(units))
}

/// [`Host`] over the host's `ICEBoard20` object.
struct FfiHost {
    this: *mut ICEBoard20,
}

// SAFETY: the spec has the engine call CEBoard from the engine's own thread ("the Engine and CEBoard will
// run on different threads"); the header states that contract. The pointer is only used from the engine
// thread, one call at a time.
unsafe impl Send for FfiHost {}

impl FfiHost {
    fn vtbl(&self) -> &ICEBoard20Vtbl {
        // SAFETY: `LoadEngine` checked that the object and its table pointer are not NULL; the host keeps its
        // object alive until it has called `Release`, which joins the engine thread before returning.
        unsafe { &*(*self.this).vtbl }
    }
}

impl Host for FfiHost {
    fn engine_move(&mut self, mv: &str) {
        let s = to_utf16(mv);
        // SAFETY: a valid host object (see `vtbl`); `s` is NUL-terminated and outlives the call.
        unsafe { (self.vtbl().engine_move)(self.this, s.as_ptr()) }
    }

    fn fatal_error(&mut self, reason: &str) {
        let s = to_utf16(reason);
        // SAFETY: as in `engine_move`.
        unsafe { (self.vtbl().fatal_error)(self.this, s.as_ptr()) }
    }

    fn game_finished(&mut self, result: &str, comment: &str) {
        let r = to_utf16(result);
        let c = to_utf16(comment);
        // SAFETY: as in `engine_move`.
        unsafe { (self.vtbl().game_finished)(self.this, r.as_ptr(), c.as_ptr()) }
    }

    fn who_plays(&mut self, name: &str) {
        let s = to_utf16(name);
        // SAFETY: as in `engine_move`.
        unsafe { (self.vtbl().who_plays)(self.this, s.as_ptr()) }
    }

    fn switch_sides(&mut self) {
        // SAFETY: a valid host object (see `vtbl`).
        unsafe { (self.vtbl().switch_sides)(self.this) }
    }

    fn show_thinking(&mut self, show: bool) {
        // SAFETY: a valid host object (see `vtbl`).
        unsafe { (self.vtbl().show_thinking)(self.this, Bool::from(show)) }
    }

    fn set_time_control(&mut self, tc: &TimeControl) {
        // SAFETY: a valid host object (see `vtbl`); plain integers.
        unsafe {
            (self.vtbl().set_time_control)(
                self.this,
                tc.sec_by_move,
                tc.moves1,
                tc.sec1,
                tc.moves2,
                tc.sec2,
                tc.sec3,
                tc.inc,
            )
        }
    }

    fn engine_feedback(&mut self, f: &Feedback) {
        let eval = to_ansi(&f.eval);
        let pv = to_ansi(&f.pv);
        // SAFETY: a valid host object (see `vtbl`); both strings are NUL-terminated and outlive the call.
        unsafe {
            (self.vtbl().engine_feedback)(
                self.this,
                f.depth,
                f.nodes_sec,
                f.total_nodes,
                f.time_ms,
                eval.as_ptr().cast(),
                pv.as_ptr().cast(),
            )
        }
    }

    fn time_info(&mut self) -> (i32, i32, i32) {
        let (mut w, mut b, mut m): (c_int, c_int, c_int) = (0, 0, 0);
        // SAFETY: a valid host object (see `vtbl`); the three pointers are to live locals.
        unsafe { (self.vtbl().get_time_info)(self.this, &mut w, &mut b, &mut m) };
        (w, b, m)
    }
}

/// Run `f` on the engine behind `this`, if any, catching panics.
///
/// # Safety
/// `this` is NULL or an object returned by [`LoadEngine`] and not yet released.
unsafe fn with_engine<R>(this: *mut IEngine, fallback: R, f: impl FnOnce(&Engine) -> R) -> R {
    if this.is_null() {
        return fallback;
    }
    // SAFETY: per the contract, a non-NULL `this` is a live object from `LoadEngine`; we only take a shared
    // reference to its engine, whose methods are safe to call from any thread.
    let engine = unsafe { &(*this).engine };
    catch_unwind(AssertUnwindSafe(|| f(engine))).unwrap_or(fallback)
}

/// `LoadEngine`: create the engine, start its thread and return its `IEngine` object, or NULL when `host` (or
/// its function table) is NULL or the thread cannot start.
///
/// # Safety
/// `host` is NULL or a valid `ICEBoard20` object that stays valid until `Release` returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn LoadEngine(host: *mut ICEBoard20) -> *mut IEngine {
    // SAFETY: a non-NULL `host` is a valid object per the contract; we only read its table pointer.
    if host.is_null() || unsafe { (*host).vtbl.is_null() } {
        return std::ptr::null_mut();
    }
    let made = catch_unwind(AssertUnwindSafe(|| {
        let engine = Engine::start(Box::new(FfiHost { this: host }), Config::from_env()).ok()?;
        Some(Box::into_raw(Box::new(IEngine { vtbl: &IENGINE_TABLE.table, engine })))
    }));
    match made {
        Ok(Some(p)) => p,
        _ => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn get_properties(this: *mut IEngine, props: *mut EngineProperties) -> Bool {
    if this.is_null() || props.is_null() {
        return FALSE;
    }
    let filled = catch_unwind(AssertUnwindSafe(|| {
        let base = props.cast::<u8>();
        // SAFETY: the host passes a structure whose first DWORD, `dwSize`, it has set; read unaligned in
        // case the host packed it.
        let size = unsafe { std::ptr::read_unaligned(props.cast::<Dword>()) } as usize;
        let fits = |offset: usize, len: usize| offset + len <= size;
        let version = std::mem::offset_of!(EngineProperties, dw_version);
        let caps = std::mem::offset_of!(EngineProperties, dw_caps);
        let name = std::mem::offset_of!(EngineProperties, s_engine_name);
        // SAFETY (the three writes): each field is written only when it lies within the `dwSize` bytes the host
        // says the structure has, at its offset in the spec's layout; unaligned writes need no alignment.
        if fits(version, 4) {
            unsafe { std::ptr::write_unaligned(base.add(version).cast::<Dword>(), ENGINE_INTERFACE_VERSION) };
        }
        if fits(caps, 4) {
            unsafe { std::ptr::write_unaligned(base.add(caps).cast::<Dword>(), MOVES_UCI) };
        }
        if fits(name, 64) {
            let mut units = [0u16; 32];
            for (slot, u) in units.iter_mut().zip(ENGINE_NAME.encode_utf16().take(31)) {
                *slot = u;
            }
            unsafe { std::ptr::write_unaligned(base.add(name).cast::<[u16; 32]>(), units) };
        }
        TRUE
    }));
    filled.unwrap_or(FALSE)
}

unsafe extern "C" fn start_game(this: *mut IEngine, play_black: Bool, analyze: Bool, fen: *const u16) {
    // SAFETY: `fen` is NULL or a NUL-terminated host string, read during the call.
    let fen = catch_unwind(|| unsafe { from_utf16(fen) }).ok().flatten();
    // SAFETY: `this` comes from `LoadEngine` (or is NULL), per the interface.
    unsafe {
        with_engine(this, (), |e| {
            e.send(Command::StartGame { play_black: play_black != 0, analyze: analyze != 0, fen })
        })
    }
}

unsafe extern "C" fn end_game(this: *mut IEngine) {
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, (), |e| e.send(Command::EndGame)) }
}

unsafe extern "C" fn release(this: *mut IEngine) {
    if this.is_null() {
        return;
    }
    // SAFETY: `this` was made by `Box::into_raw` in `LoadEngine` and the host releases it once; taking it
    // back frees it when dropped. Dropping the engine stops and joins its thread, so no host call happens
    // after `Release` returns.
    let boxed = unsafe { Box::from_raw(this) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

unsafe extern "C" fn send_move(this: *mut IEngine, mv: *const u16) {
    // SAFETY: `mv` is NULL or a NUL-terminated host string, read during the call.
    let text = catch_unwind(|| unsafe { from_utf16(mv) }).ok().flatten().unwrap_or_default();
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, (), |e| e.send(Command::SendMove(text))) }
}

unsafe extern "C" fn show_options(_this: *mut IEngine, _hwnd: *mut c_void) -> Bool {
    FALSE
}

unsafe extern "C" fn get_menu(_this: *mut IEngine) -> *mut c_void {
    std::ptr::null_mut()
}

unsafe extern "C" fn handle_command(_this: *mut IEngine, _hwnd: *mut c_void, _wparam: usize, _lparam: isize) -> Bool {
    FALSE
}

unsafe extern "C" fn set_position(this: *mut IEngine, fen: *const u16) {
    // SAFETY: `fen` is NULL or a NUL-terminated host string, read during the call.
    let fen = catch_unwind(|| unsafe { from_utf16(fen) }).ok().flatten().unwrap_or_default();
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, (), |e| e.send(Command::SetPosition(fen))) }
}

unsafe extern "C" fn move_now(this: *mut IEngine) {
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, (), |e| e.send(Command::MoveNow)) }
}

unsafe extern "C" fn is_alive(this: *mut IEngine) -> Bool {
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, FALSE, |e| Bool::from(e.is_alive())) }
}

unsafe extern "C" fn get_messages(this: *mut IEngine, want: Bool) {
    // SAFETY: as in `start_game`.
    unsafe { with_engine(this, (), |e| e.send(Command::GetMessages(want != 0))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(std::mem::size_of::<EngineProperties>(), 76);
        assert_eq!(std::mem::size_of::<IEngineVtbl>(), 12 * std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<ICEBoard20Vtbl>(), 9 * std::mem::size_of::<usize>());
        assert_eq!(std::mem::offset_of!(IEngine, vtbl), 0);
        // Found by an audit: the two words before the functions were whatever lay before the table.
        assert_eq!(std::mem::offset_of!(PrefixedVtbl, table), 2 * std::mem::size_of::<usize>());
        assert_eq!((IENGINE_TABLE.offset_to_top, IENGINE_TABLE.type_info), (0, 0));
    }

    #[test]
    fn null_pointers_are_harmless() {
        // SAFETY: NULL is allowed everywhere.
        unsafe {
            assert!(LoadEngine(std::ptr::null_mut()).is_null());
            let host = ICEBoard20 { vtbl: std::ptr::null() };
            assert!(LoadEngine(&host as *const _ as *mut _).is_null());
            assert_eq!(get_properties(std::ptr::null_mut(), std::ptr::null_mut()), FALSE);
            assert_eq!(is_alive(std::ptr::null_mut()), FALSE);
            send_move(std::ptr::null_mut(), std::ptr::null());
            release(std::ptr::null_mut());
        }
    }

    #[test]
    fn strings() {
        let s = to_utf16("e2e4");
        // SAFETY: `s` is NUL-terminated.
        assert_eq!(unsafe { from_utf16(s.as_ptr()) }, Some("e2e4".to_string()));
        assert_eq!(to_ansi("Nf3 é"), b"Nf3 ?\0");
    }
}
