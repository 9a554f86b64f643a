/*
 * ceboard.h: the CEBoard engine interface (version 2) for C++ hosts of libkibitz.so.
 *
 * The interfaces are those of the spec (shared/specs/ceboard-engine-interface.txt), with the Windows CE types
 * mapped to their sizes: BOOL = 32-bit int, DWORD = 32-bit unsigned, HWND/HMENU = pointers,
 * WPARAM/LPARAM = pointer-sized integers, LPCTSTR and TCHAR = UTF-16 (char16_t, as on Windows CE),
 * LPCSTR = bytes (EngineFeedback's strings are ANSI, as the spec warns).
 *
 * Layout: each interface is a class with only pure virtual functions, no base class and no virtual
 * destructor, so an object is one pointer to a table of functions in declaration order, and `this` is the
 * first argument of each (the Itanium C++ ABI on Linux; also Windows x64). The engine is written against
 * exactly that layout; its own table has the two words C++ puts before the functions (offset to top 0,
 * type information NULL, as a class compiled without RTTI has).
 *
 * Ownership: LoadEngine allocates the IEngine object; IEngine::Release stops the engine and frees it (never
 * `delete` it). The ICEBoard20 object stays the host's and must stay valid until Release has returned.
 * Strings passed in either direction are valid only during the call: copy them to keep them.
 *
 * Threading contract:
 *   - IEngine calls return at once: they queue the request for the engine thread. The exceptions:
 *     GetProperties and IsAlive answer on the calling thread; Release waits for the engine thread to end
 *     (a few milliseconds), after which the engine calls nothing more.
 *   - Every ICEBoard20 call (EngineMove, GameFinished, EngineFeedback, GetTimeInfo, ...) is made from the
 *     engine's own thread, one at a time, never from inside an IEngine call. A host whose UI is
 *     single-threaded must post them to its UI thread. A callback may call back into IEngine (except
 *     Release).
 *   - IEngine should be called from one host thread at a time.
 *
 * Engine conventions:
 *   - GetProperties fills the fields that fit in dwSize: dwVersion = 2, dwCaps = MOVES_UCI,
 *     sEngineName = u"kibitz".
 *   - StartGame(bPlayBlack, bAnalyze, sFen): sFen NULL or empty = the start position; X-FEN/Shredder
 *     castling letters accepted (Chess960). The engine thinks at once when it is its turn.
 *   - SendMove accepts UCI coordinates (e2e4, e7e8q, e1g1) and SAN (Nf3, O-O, e8=Q). A move on the
 *     engine's turn (while it thinks) is the user taking its side over: the engine plays the move, calls
 *     SwitchSides and thinks for the other side.
 *   - EngineMove gives UCI coordinates with the promotion letter in upper case (e7e8Q); castling e1g1.
 *   - SetPosition(sFEN): the engine stops and waits (in analysis mode it analyses the new position). A
 *     finished position (mate, stalemate, 50-move rule, insufficient material) gets GameFinished.
 *   - MoveNow: thinking, it plays at once; analysing, it plays its best move and goes on analysing; on the
 *     user's turn it calls SwitchSides and thinks for the side to move. The user's turn starts when
 *     EngineMove has returned: a MoveNow called before that (the engine's move already on its way) does
 *     nothing, unless StartGame, SendMove, SetPosition or EndGame was called between the two.
 *   - GameFinished(sResult, sComment): "1-0", "0-1", "1/2-1/2"; "Checkmate", "Stalemate",
 *     "Threefold repetition", "50-move rule", "Insufficient material"; once, after the move that ends the
 *     game, or on StartGame or SetPosition with a finished position.
 *   - EngineFeedback (after GetMessages(TRUE)): depth, nodes per second, total nodes, time in milliseconds,
 *     the score from White's side in pawns ("+0.35") or as a mate in moves ("#3", "-#2"), the line in SAN. An
 *     analysis that ends by itself (a mate seen to the end) reports its final line. Reports never hold the
 *     move back: a slow EngineFeedback makes the engine skip to the newest report, none is sent once the move
 *     is ready or after MoveNow, and none that, at the pace the host took the last ones, it would still be
 *     taking when the move's time is up.
 *   - GetTimeInfo: the engine asks for the milliseconds left to White and Black and the moves to the next
 *     control (0 = none) before each move; all zero means no clock (it then thinks one second). With
 *     KIBITZ_CEBOARD_SECONDS=n in the environment it thinks n seconds a move instead and says so with
 *     SetTimeControl(n, 0, 0, 0, 0, 0, 0) at StartGame. KIBITZ_CEBOARD_HASH_MB sets its table size.
 *   - Errors (a bad FEN, an illegal move, a move without a game) call FatalError with the reason; the
 *     engine stays usable. ShowOptions, GetMenu and HandleCommand have no windows here: FALSE, NULL, FALSE.
 */
#ifndef KIBITZ_CEBOARD_H
#define KIBITZ_CEBOARD_H

#include <stdint.h>

#ifndef _WINDOWS_
typedef int32_t BOOL;
typedef uint32_t DWORD;
typedef void *HWND;
typedef void *HMENU;
typedef uintptr_t WPARAM;
typedef intptr_t LPARAM;
typedef char16_t TCHAR;
typedef const char16_t *LPCTSTR;
typedef const char *LPCSTR;
#ifndef TRUE
#define TRUE 1
#define FALSE 0
#endif
#endif

#define ENGINE_INTERFACE_VERSION 2
#define MOVES_UCI 1

typedef struct tagEngineProperties {
    DWORD dwSize;    /* structure size, set by the host */
    DWORD dwVersion; /* version of the interface */
    DWORD dwCaps;    /* MOVES_UCI */
    TCHAR sEngineName[32];
} EngineProperties;

class IEngine {
public:
    virtual BOOL GetProperties(EngineProperties *pProps) = 0;
    virtual void StartGame(BOOL bPlayBlack, BOOL bAnalyze, LPCTSTR sFen) = 0;
    virtual void EndGame() = 0;
    virtual void Release() = 0;
    virtual void SendMove(LPCTSTR sMove) = 0;
    virtual BOOL ShowOptions(HWND hWnd) = 0;
    virtual HMENU GetMenu() = 0;
    virtual BOOL HandleCommand(HWND hWnd, WPARAM wParam, LPARAM lParam) = 0;
    virtual void SetPosition(LPCTSTR sFEN) = 0;
    virtual void MoveNow() = 0;
    virtual BOOL IsAlive() = 0;
    virtual void GetMessages(BOOL bWantMessages) = 0;
};

typedef IEngine *LPENGINE;

class ICEBoard20 {
public:
    /* Version 1 methods */
    virtual void EngineMove(LPCTSTR sMove) = 0;
    virtual void FatalError(LPCTSTR sError) = 0;
    virtual void GameFinished(LPCTSTR sResult, LPCTSTR sComment) = 0;
    virtual void WhoPlays(LPCTSTR sPlayer) = 0;
    virtual void SwitchSides() = 0;
    virtual void ShowThinking(BOOL bShow) = 0;
    virtual void SetTimeControl(int nSecByMove, int nMoves1, int nSec1, int nMoves2, int nSec2, int nSec3,
                                int nInc) = 0;
    virtual void EngineFeedback(int depth, int nodesSec, int totalNodes, int nTime, LPCSTR sEval,
                                LPCSTR sVariante) = 0;
    virtual void GetTimeInfo(int *pwtime, int *pbtime, int *pmovestogo) = 0;
};

typedef LPENGINE (*LoadEngineProc)(ICEBoard20 *pCEBoard);

#define EngineProcName "LoadEngine"

extern "C" IEngine *LoadEngine(ICEBoard20 *pCEBoard);

#endif
