#!/bin/sh
# Build the fuzzing seed corpora in fuzz/corpus/<target>/ from the repository's fixtures (records in
# tests/data/records, chess test positions) and a few start positions, so that nothing but this script is
# committed. Run from anywhere; existing corpus files are kept (a seed is rewritten in place).
#
# The game targets read a mode byte first (see fuzz/src/lib.rs): 0 a position (then a format selector byte),
# 1 a position line and one move per line, 2 a game record (then a format selector byte). A selector past the
# game's last format means "detect the format".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../tests/data"
corpus="$here/corpus"

# seed TARGET NAME PREFIX-BYTES (octal escapes for printf) TEXT
seed() {
    mkdir -p "$corpus/$1"
    { printf "$3"; printf '%s' "$4"; } > "$corpus/$1/seed-$2"
}
# seedfile TARGET NAME PREFIX-BYTES FILE
seedfile() {
    mkdir -p "$corpus/$1"
    { printf "$3"; cat "$4"; } > "$corpus/$1/seed-$2"
}

# Positions: mode 0, then the selector (0 = the main format, 9 = detect).
seed game_checkers start '\000\000' 'B:W21-32:B1-12'
seed game_checkers kings '\000\011' 'W:WK3,18,K27:B6,K14,23'
seed game_draughts start '\000\000' 'W:W31-50:B1-20'
seed game_draughts kings '\000\011' 'B:WK34,29,39,44:BK3,13,18'
seed game_draughts counters '\000\000' 'W:W31-50:B1-20:H0:F1'
seed game_draughts counters2 '\000\000' 'B:WK34,29:BK3,13:H12:F40'
seed game_draughts guide '\000\001' 'white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww'
seed game_hive start '\000\000' 'Base+MLP;NotStarted;White[1]'
seed game_hive game '\000\011' 'Base+MLP;InProgress;White[3];wS1;bS1 wS1-;wQ -wS1;bQ bS1-'
seed game_xiangqi start '\000\000' 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1'
seed game_chess start '\000\000' 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
seed game_chess ep '\000\011' 'rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3'
# The first ten positions of the chess test suite (EPD: four FEN fields, then operations).
head -n 10 "$data/chess/wac.epd" | awk '{ print $1, $2, $3, $4, "0 1" }' | {
    i=0
    while read -r fen; do
        seed game_chess "wac$i" '\000\000' "$fen"
        i=$((i + 1))
    done
}

# Move lists: mode 1; a first line that is no position stands for the start position.
seed game_checkers moves '\001' "$(printf 'start\n11-15\n22-18\n15x22\n25x18\n9-14\n18x9\n5x14')"
seed game_draughts moves '\001' "$(printf 'start\n32-28\n18-23\n33-29\n23x32\n37x28\n31 33 2 27 28')"
seed game_hive moves '\001' "$(printf 'start\nwS1\nbS1 wS1-\nwQ -wS1\nbQ bS1-\nwQ \\wS1\npass')"
seed game_xiangqi moves '\001' "$(printf 'start\nh2e2\nH9-G7\nh0g2\ni9h9\ni0h0')"
seed game_chess moves '\001' "$(printf 'start\ne2e4\ne5\nNf3\nNc6\nBb5\na6\nO-O\ne7e5')"

# Records: mode 2, the selector 0 = the main record format, 9 = detect.
seedfile game_checkers pdn '\002\000' "$data/records/checkers.pdn"
seedfile game_draughts pdn '\002\000' "$data/records/draughts.pdn"
seedfile game_draughts guide '\002\001' "$data/records/draughts_guide.txt"
seed game_draughts pdnfen '\002\000' "$(printf '[GameType "20"]\n[FEN "W:W31-50:B1-20:H0:F1"]\n\n1. 32-28 19-23 *\n')"
seedfile game_hive records '\002\000' "$data/records/hive.txt"
seedfile game_xiangqi pgn '\002\000' "$data/records/xiangqi.pgn"
seedfile game_xiangqi moves-record '\002\001' "$data/records/xiangqi_moves.txt"
seedfile game_chess pgn '\002\000' "$data/records/chess_collection.pgn"
seedfile game_chess detect '\002\011' "$data/records/chess_collection.pgn"

# Protocol sessions: a short transcript each, from the commands each protocol documents.
seed session_checkers game '' "$(printf 'INIT\nNEWGAME B:W21-32:B1-12 11-15\nMOVE 22-18\nGO dontplaymove\nGETPARAMETERS\nGETPARAMETER depth\nSETPARAMETER depth 2\nGO\nSTOP\nQUIT\n')"
seed session_checkers setup '' "$(printf 'NEWGAME "W:W18,24,K27:B12,16" 27-23\nSETPARAMETER time 0.01\nGO\nMOVE 9x13\nNEWGAME 11-15 23-19 8-11\nGO\n')"
seed session_guide game '' "$(printf 'guide\ncapabilities\nnew\nmove 32 28 0\nlevelsfixeddepth 2\ngo\nrequestposition\nrequestgame\nforward -1\njumpto 0\nping 1\nquit\n')"
seed session_guide analysis '' "$(printf 'position white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nenginemode 2\ngo\nhalt 1\nenginemode 1 50\ngame white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww 2 m 32 28 0 m 18 23 0\ngo\nhalt 0\n#kibitz fen\n#kibitz setfen W:W31-50:B1-20\n#kibitz pdn\nsetoption 1 3\nlevelsblitzgame 60 1\ngo 1 2\n')"
seed session_uhp game '' "$(printf 'info\nnewgame Base+MLP\nplay wS1\nplay bS1 wS1-\nvalidmoves\nbestmove depth 1\nundo\noptions\noptions get Level\noptions set RepetitionRule True\nperft 2\npass\nexit\n')"
seed session_uhp gamestring '' "$(printf 'newgame Base+MLP;InProgress;White[3];wS1;bS1 wS1-;wQ -wS1;bQ bS1-\nbestmove\nbestmove time 00:00:00.01\nundo 2\nhelp play\n')"
seed session_qianhong game '' "$(printf 'LEVEL\nLEVEL 1\nFEN rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1\nPLAY H2-E2\nAI\nHINTS\nUNDO\nBAN 1\nH9-G7\nAI\nTIMEOUT\nBGTHINK OFF\nQUIT\n')"
seed session_qianhong load '' "$(printf 'LOAD 3\nh2e2\nh9g7\nh0g2\nAI\nABORT\n')"

# API bodies: the first byte picks the endpoint (0 analysis, 1 moves, 2 convert, 3 annotations, 4 GET
# analysis with a query string).
seed http_bodies analysis '\000' '{"game":"chess","moves":["e2e4","e7e5"],"depth":2,"multipv":2,"move_format":"san","white_pov":true}'
seed http_bodies moves '\001' '{"game":"draughts","position":"W:W31-50:B1-20","format":"fen","moves":["32-28"]}'
seed http_bodies convert '\002' '{"game":"xiangqi","position":"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1","to":"fen"}'
seed http_bodies annotations '\003' '{"game":"checkers","text":"1. 11-15 22-18 *","depth":1,"threshold":50}'
seed http_bodies query '\004' 'game=hive&position=Base%2BMLP&depth=1&cache=refresh'

# CEBoard calls: the first character of a line picks the call (0 StartGame as White, 6 StartGame as Black,
# 2 SendMove, 3 SetPosition, 4 MoveNow, 5 GetMessages, 1 EndGame), the rest is its text.
seed ceboard game '' "$(printf '0\n2e2e4\n4\n5\n2g8f6\n4\n1\n')"
seed ceboard position '' "$(printf '3rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1\n6\n4\n<\n4\n1\n')"

# PROXY protocol headers: the first byte picks the part (0 the version 1 parser, 1 the version 2 parser, 2 the
# reader on a loopback connection, the header then a GUIDE line after it).
seed proxy_header v1 '\000' "$(printf 'PROXY TCP4 203.0.113.9 10.0.0.2 51234 27533\r\n')"
seed proxy_header v1-ipv6 '\000' "$(printf 'PROXY TCP6 2001:db8::7 2001:db8::1 4000 27533\r\n')"
seed proxy_header v2 '\001\015\012\015\012\000\015\012\121\125\111\124\012\041\021\000\014\313\000\161\011\012\000\000\002\310\042\153\155' ''
seed proxy_header reader-v1 '\002' "$(printf 'PROXY TCP4 203.0.113.9 10.0.0.2 51234 27533\r\nnew\n')"
seed proxy_header reader-v2 '\002\015\012\015\012\000\015\012\121\125\111\124\012\041\021\000\014\313\000\161\011\012\000\000\002\310\042\153\155' 'new'
seed proxy_header reader-plain '\002' "$(printf 'new\nlevel blitz 300 0\n')"
