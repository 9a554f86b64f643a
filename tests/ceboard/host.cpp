// A CEBoard-style host for libkibitz.so: loads the library with dlopen, makes two engines play a whole game
// against each other through the interface (each engine's EngineMove is relayed to the other as the user's
// SendMove), then analyses a position with feedback on, uses MoveNow both ways, feeds bad input, and checks
// every callback's arguments. Prints `GAME <uci moves>` and `RESULT <result> <comment>` for the Rust test
// to replay, and `OK` at the end; any failure prints `FAIL: ...` and exits 1.
//
// Usage: host <path to libkibitz.so> [max plies]

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../include/ceboard.h"

static void fail(const std::string &why) {
    std::printf("FAIL: %s\n", why.c_str());
    std::fflush(stdout);
    std::exit(1);
}

static std::string narrow(LPCTSTR s) {
    std::string out;
    if (!s) return out;
    for (; *s; ++s) out.push_back(*s < 128 ? char(*s) : '?');
    return out;
}

static std::u16string widen(const std::string &s) {
    std::u16string out;
    for (char c : s) out.push_back(char16_t((unsigned char)c));
    return out;
}

enum Kind { MOVE, FATAL, FINISHED, WHO, SWITCH, SHOW, TIMECONTROL, FEEDBACK, TIMEINFO };

struct Event {
    int engine;
    Kind kind;
    std::string a, b;
    int n[7];
};

// Events from both engines' threads, in arrival order.
static std::mutex mu;
static std::condition_variable cv;
static std::deque<Event> events;

static void post(Event e) {
    {
        std::lock_guard<std::mutex> g(mu);
        events.push_back(e);
    }
    cv.notify_all();
}

// Wait up to `seconds` for the next event of one of `kinds` from `engine` (-1: any); earlier events of other
// kinds are kept in `skipped` for inspection.
static std::vector<Event> skipped;
static Event wait_for(int engine, std::vector<Kind> kinds, int seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::unique_lock<std::mutex> g(mu);
    for (;;) {
        while (!events.empty()) {
            Event e = events.front();
            events.pop_front();
            bool match = engine < 0 || e.engine == engine;
            bool kind = false;
            for (Kind k : kinds) kind = kind || e.kind == k;
            if (e.kind == FATAL && !(kind && match)) fail("unexpected FatalError: " + e.a);
            if (match && kind) return e;
            skipped.push_back(e);
        }
        if (cv.wait_until(g, deadline) == std::cv_status::timeout && events.empty()) {
            fail("timed out waiting for a callback");
        }
    }
}

class Host : public ICEBoard20 {
public:
    explicit Host(int id) : id(id) {}
    int id;
    int wtime = 2000, btime = 2000, movestogo = 30;

    void EngineMove(LPCTSTR sMove) override { post({id, MOVE, narrow(sMove), "", {}}); }
    void FatalError(LPCTSTR sError) override { post({id, FATAL, narrow(sError), "", {}}); }
    void GameFinished(LPCTSTR sResult, LPCTSTR sComment) override {
        post({id, FINISHED, narrow(sResult), narrow(sComment), {}});
    }
    void WhoPlays(LPCTSTR sPlayer) override { post({id, WHO, narrow(sPlayer), "", {}}); }
    void SwitchSides() override { post({id, SWITCH, "", "", {}}); }
    void ShowThinking(BOOL bShow) override { post({id, SHOW, "", "", {bShow}}); }
    void SetTimeControl(int a, int b, int c, int d, int e, int f, int g) override {
        post({id, TIMECONTROL, "", "", {a, b, c, d, e, f, g}});
    }
    void EngineFeedback(int depth, int nodesSec, int totalNodes, int nTime, LPCSTR sEval, LPCSTR sVariante) override {
        if (!sEval || !sVariante) fail("EngineFeedback with a NULL string");
        post({id, FEEDBACK, sEval, sVariante, {depth, nodesSec, totalNodes, nTime}});
    }
    void GetTimeInfo(int *pwtime, int *pbtime, int *pmovestogo) override {
        if (!pwtime || !pbtime || !pmovestogo) fail("GetTimeInfo with a NULL pointer");
        *pwtime = wtime;
        *pbtime = btime;
        *pmovestogo = movestogo;
        post({id, TIMEINFO, "", "", {}});
    }
};

static bool is_uci_move(const std::string &m) {
    if (m.size() != 4 && m.size() != 5) return false;
    auto file = [](char c) { return c >= 'a' && c <= 'h'; };
    auto rank = [](char c) { return c >= '1' && c <= '8'; };
    if (!file(m[0]) || !rank(m[1]) || !file(m[2]) || !rank(m[3])) return false;
    return m.size() == 4 || std::strchr("QRBN", m[4]) != nullptr;
}

static bool is_eval(const std::string &s) {
    if (s.empty()) return false;
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-') i = 1;
    if (i < s.size() && s[i] == '#') return i + 1 < s.size();
    return s.find('.') != std::string::npos && i > 0;
}

static void check(bool ok, const std::string &what) {
    if (!ok) fail(what);
}

// An engine that cannot start (its chess network is unusable): FatalError with the reason, then its thread ends,
// so IsAlive turns FALSE; commands after it are ignored and Release still works.
static int bad_engine(void *lib, LoadEngineProc load) {
    Host host(0);
    IEngine *e = load(&host);
    check(e != nullptr, "LoadEngine returned NULL");
    Event f = wait_for(0, {FATAL});
    std::printf("FATAL %s\n", f.a.c_str());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (e->IsAlive() == TRUE) {
        if (std::chrono::steady_clock::now() > deadline) fail("IsAlive stays TRUE after the FatalError");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    e->StartGame(FALSE, FALSE, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    {
        std::lock_guard<std::mutex> g(mu);
        if (!events.empty()) fail("a callback from an engine that stopped");
    }
    e->Release();
    dlclose(lib);
    std::printf("OK\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) fail("usage: host <libkibitz.so> [max plies | bad]");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) fail(std::string("dlopen: ") + dlerror());
    auto load = reinterpret_cast<LoadEngineProc>(dlsym(lib, EngineProcName));
    if (!load) fail("no LoadEngine export");
    if (argc > 2 && std::string(argv[2]) == "bad") return bad_engine(lib, load);
    int max_plies = argc > 2 ? std::atoi(argv[2]) : 200;
    check(load(nullptr) == nullptr, "LoadEngine(NULL) must return NULL");

    Host host_a(0), host_b(1);
    IEngine *a = load(&host_a);
    IEngine *b = load(&host_b);
    check(a && b, "LoadEngine returned NULL");
    IEngine *engines[2] = {a, b};

    // Properties: every field, then a structure too small for the name.
    EngineProperties props;
    std::memset(&props, 0xAB, sizeof props);
    props.dwSize = sizeof props;
    check(a->GetProperties(&props) == TRUE, "GetProperties");
    check(props.dwVersion == ENGINE_INTERFACE_VERSION, "dwVersion");
    check(props.dwCaps & MOVES_UCI, "MOVES_UCI");
    check(std::u16string(props.sEngineName) == u"kibitz", "sEngineName");
    EngineProperties small;
    std::memset(&small, 0xAB, sizeof small);
    small.dwSize = 12;
    check(a->GetProperties(&small) == TRUE && small.dwCaps == MOVES_UCI && small.sEngineName[0] == 0xABAB,
          "GetProperties must fill only dwSize bytes");
    check(a->GetProperties(nullptr) == FALSE, "GetProperties(NULL)");
    check(a->ShowOptions(nullptr) == FALSE && a->GetMenu() == nullptr && a->HandleCommand(nullptr, 0, 0) == FALSE,
          "no options, no menu");
    check(a->IsAlive() == TRUE && b->IsAlive() == TRUE, "IsAlive");

    // 1. A whole game: A plays White, B plays Black; each move is relayed to the other engine.
    a->StartGame(FALSE, FALSE, nullptr);
    b->StartGame(TRUE, FALSE, u"");
    std::vector<std::string> moves;
    std::string result, comment;
    int finished = 0;
    while ((int)moves.size() < max_plies && finished < 2) {
        Event e = wait_for(-1, {MOVE, FINISHED}, 60);
        if (e.kind == FINISHED) {
            check(e.a == "1-0" || e.a == "0-1" || e.a == "1/2-1/2", "result " + e.a);
            check(!e.b.empty(), "a finished game needs a comment");
            if (finished == 0) {
                result = e.a;
                comment = e.b;
            } else {
                check(result == e.a && comment == e.b, "both engines see the same end");
            }
            finished++;
            continue;
        }
        check(finished == 0, "a move after the end of the game");
        check(is_uci_move(e.a), "EngineMove `" + e.a + "` is not UCI");
        int to_move = moves.size() % 2;
        check(e.engine == to_move, "engine " + std::to_string(e.engine) + " moved out of turn");
        moves.push_back(e.a);
        engines[1 - e.engine]->SendMove(widen(e.a).c_str());
    }
    std::printf("GAME");
    for (auto &m : moves) std::printf(" %s", m.c_str());
    std::printf("\n");
    if (finished) std::printf("RESULT %s %s\n", result.c_str(), comment.c_str());
    a->EndGame();
    b->EndGame();
    bool who = false, timeinfo = false;
    for (auto &e : skipped) {
        if (e.kind == WHO) who = who || e.a == "kibitz";
        if (e.kind == TIMEINFO) timeinfo = true;
    }
    check(who, "WhoPlays(kibitz)");
    check(timeinfo, "the engines ask GetTimeInfo");
    check(moves.size() >= 2, "at least a move each");

    // 2. Analysis with feedback on, then MoveNow plays the best move found.
    skipped.clear();
    a->GetMessages(TRUE);
    Event show = wait_for(0, {SHOW});
    check(show.n[0] == TRUE, "ShowThinking(TRUE)");
    a->StartGame(FALSE, TRUE, u"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    int last_depth = 0, feedbacks = 0;
    while (last_depth < 5) {
        Event f = wait_for(0, {FEEDBACK});
        check(f.n[0] >= 1 && f.n[0] >= last_depth, "feedback depth goes up");
        check(f.n[1] >= 0 && f.n[2] > 0 && f.n[3] >= 0, "feedback counts");
        check(is_eval(f.a), "feedback eval `" + f.a + "`");
        check(!f.b.empty() && f.b.size() < 2000, "feedback line");
        last_depth = f.n[0];
        feedbacks++;
    }
    std::printf("FEEDBACK %d reports, last depth %d\n", feedbacks, last_depth);
    a->MoveNow();
    Event m = wait_for(0, {MOVE});
    check(is_uci_move(m.a), "MoveNow while analysing plays a move");
    std::printf("ANALYSIS_MOVE %s\n", m.a.c_str());
    a->GetMessages(FALSE);
    a->EndGame();

    // 3. MoveNow on the user's turn: the engine switches sides and moves.
    skipped.clear();
    a->StartGame(TRUE, FALSE, nullptr);
    a->MoveNow();
    wait_for(0, {SWITCH});
    Event sw = wait_for(0, {MOVE});
    check(is_uci_move(sw.a), "a move after SwitchSides");
    std::printf("SWITCH_MOVE %s\n", sw.a.c_str());
    a->EndGame();

    // 4. Bad input: FatalError, and the engine lives on.
    a->SendMove(u"e2e4");
    Event f1 = wait_for(0, {FATAL});
    check(f1.a.find("without a game") != std::string::npos, "move without a game: " + f1.a);
    a->StartGame(FALSE, FALSE, u"this is not a FEN");
    Event f2 = wait_for(0, {FATAL});
    check(f2.a.find("FEN") != std::string::npos, "bad FEN: " + f2.a);
    a->StartGame(TRUE, FALSE, nullptr);
    a->SendMove(u"e2e5");
    Event f3 = wait_for(0, {FATAL});
    check(f3.a.find("e2e5") != std::string::npos, "illegal move: " + f3.a);
    a->SendMove(nullptr);
    wait_for(0, {FATAL});
    a->SetPosition(nullptr);
    wait_for(0, {FATAL});
    // Algebraic input is accepted too: the engine answers 1. Nf3.
    a->SendMove(u"Nf3");
    Event reply = wait_for(0, {MOVE});
    check(is_uci_move(reply.a), "a reply to Nf3");
    a->EndGame();
    check(a->IsAlive() == TRUE, "alive after errors");

    // 5. A mate in one: the move, then GameFinished; then a finished position set with SetPosition.
    a->StartGame(FALSE, FALSE, u"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    Event mate = wait_for(0, {MOVE});
    check(mate.a == "a1a8", "mate in one: " + mate.a);
    Event end = wait_for(0, {FINISHED});
    check(end.a == "1-0" && end.b == "Checkmate", "GameFinished(" + end.a + ", " + end.b + ")");
    // SetPosition to a finished position ends the game too.
    a->SetPosition(u"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    Event stalemate = wait_for(0, {FINISHED});
    check(stalemate.a == "1/2-1/2" && stalemate.b == "Stalemate",
          "SetPosition: GameFinished(" + stalemate.a + ", " + stalemate.b + ")");

    // 6. Release while thinking: no callback after it returns.
    a->StartGame(FALSE, TRUE, nullptr);
    a->Release();
    b->Release();
    {
        std::lock_guard<std::mutex> g(mu);
        events.clear();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    {
        std::lock_guard<std::mutex> g(mu);
        if (!events.empty()) fail("a callback after Release");
    }
    dlclose(lib);
    std::printf("OK\n");
    return 0;
}
