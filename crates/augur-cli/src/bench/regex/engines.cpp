// The C and C++ regex engines `augur bench regex` measures beside
// augur-regex: PCRE2 with its JIT, RE2 and Hyperscan. The bench compiles
// this file with g++ (-DHAVE_PCRE2, -DHAVE_RE2, -DHAVE_HS for the
// libraries whose headers it finds) and runs it once:
//
//   engines HAYSTACK PATTERNS REPS
//
// PATTERNS holds one pattern a line: `name TAB u|b TAB pattern` (u: Unicode
// over UTF-8, b: bytes). For each pattern and engine it prints
//
//   name TAB engine TAB mode TAB result TAB nanoseconds
//
// with mode `compile` (the time to build the matcher), `count` (matches,
// leftmost-first and non-overlapping, as the regex crate's find_iter),
// `spans` (the sum of the matches' lengths) and `lines` (the lines that
// hold a match), each the best of REPS runs; or mode `error` with the
// engine's message in place of the result.
//
// Hyperscan reports every end of a match, not leftmost-first matches: its
// count keeps a match only when it starts at or after the end of the last
// one kept (with the leftmost start, HS_FLAG_SOM_LEFTMOST), which agrees
// with the others where matches cannot grow past their first end; the
// bench compares the results and leaves out what differs.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#ifdef HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif
#ifdef HAVE_RE2
#include <re2/re2.h>
#endif
#ifdef HAVE_HS
#include <hs/hs.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Pattern {
    std::string name;
    bool unicode;
    std::string text;
};

// The spans of lines, without their '\n'.
struct Line {
    size_t start, len;
};

std::vector<Line> lines_of(const std::string& hay) {
    std::vector<Line> out;
    size_t start = 0;
    for (size_t i = 0; i <= hay.size(); i++) {
        if (i == hay.size() || hay[i] == '\n') {
            out.push_back({start, i - start});
            start = i + 1;
        }
    }
    return out;
}

// Prints the best time of `reps` runs of `f` and its result.
void measure(const Pattern& p, const char* engine, const char* mode, int reps,
             const std::function<int64_t()>& f) {
    int64_t best = INT64_MAX, result = 0;
    for (int r = 0; r < reps; r++) {
        auto t0 = Clock::now();
        result = f();
        int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
        if (ns < best) best = ns;
    }
    std::printf("%s\t%s\t%s\t%lld\t%lld\n", p.name.c_str(), engine, mode, (long long)result,
                (long long)best);
}

void error(const Pattern& p, const char* engine, const std::string& message) {
    std::string m = message;
    for (char& c : m)
        if (c == '\t' || c == '\n') c = ' ';
    std::printf("%s\t%s\terror\t%s\t0\n", p.name.c_str(), engine, m.c_str());
}

// Runs the three modes over a `find(at) -> (start, end)` search (start < 0
// when there is none) and a per-line `matches(start, len)` test.
void modes(const Pattern& p, const char* engine, const std::string& hay, const std::vector<Line>& lines,
           int reps, const std::function<bool(size_t, size_t*, size_t*)>& find,
           const std::function<bool(size_t, size_t)>& matches) {
    auto iterate = [&](bool spans) {
        int64_t n = 0;
        size_t at = 0, s, e;
        while (at <= hay.size() && find(at, &s, &e)) {
            n += spans ? int64_t(e - s) : 1;
            at = e > s ? e : e + 1;
        }
        return n;
    };
    measure(p, engine, "count", reps, [&] { return iterate(false); });
    measure(p, engine, "spans", reps, [&] { return iterate(true); });
    measure(p, engine, "lines", reps, [&] {
        int64_t n = 0;
        for (const Line& l : lines) n += matches(l.start, l.len);
        return n;
    });
}

template <typename F>
int64_t elapsed(F f) {
    auto t0 = Clock::now();
    f();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

void compiled(const Pattern& p, const char* engine, int64_t ns) {
    std::printf("%s\t%s\tcompile\t0\t%lld\n", p.name.c_str(), engine, (long long)ns);
}

#ifdef HAVE_PCRE2
void run_pcre2(const Pattern& p, const std::string& hay, const std::vector<Line>& lines, int reps) {
    int err;
    PCRE2_SIZE offset;
    pcre2_code* re = nullptr;
    uint32_t opts = p.unicode ? PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK : 0;
    int64_t ns = elapsed([&] {
        re = pcre2_compile((PCRE2_SPTR)p.text.data(), p.text.size(), opts, &err, &offset, nullptr);
        if (re) pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    });
    if (!re) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return error(p, "PCRE2-JIT", (const char*)buf);
    }
    compiled(p, "PCRE2-JIT", ns);
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
    pcre2_match_context* mc = pcre2_match_context_create(nullptr);
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(mc, nullptr, stack);
    auto subject = (PCRE2_SPTR)hay.data();
    auto find = [&](size_t at, size_t* s, size_t* e) {
        int rc = pcre2_jit_match(re, subject, hay.size(), at, 0, md, mc);
        if (rc < 0) return false;
        PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        *s = ov[0];
        *e = ov[1];
        return true;
    };
    auto matches = [&](size_t start, size_t len) {
        return pcre2_jit_match(re, subject + start, len, 0, 0, md, mc) >= 0;
    };
    modes(p, "PCRE2-JIT", hay, lines, reps, find, matches);
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
}
#endif

#ifdef HAVE_RE2
void run_re2(const Pattern& p, const std::string& hay, const std::vector<Line>& lines, int reps) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_encoding(p.unicode ? RE2::Options::EncodingUTF8 : RE2::Options::EncodingLatin1);
    // Latin-1 reads bytes as themselves; the pattern is written in bytes too.
    RE2* re = nullptr;
    int64_t ns = elapsed([&] { re = new RE2(p.text, o); });
    if (!re->ok()) {
        error(p, "RE2", re->error());
        delete re;
        return;
    }
    compiled(p, "RE2", ns);
    re2::StringPiece text(hay);
    auto find = [&](size_t at, size_t* s, size_t* e) {
        re2::StringPiece m;
        if (!re->Match(text, at, hay.size(), RE2::UNANCHORED, &m, 1)) return false;
        *s = m.data() - hay.data();
        *e = *s + m.size();
        return true;
    };
    auto matches = [&](size_t start, size_t len) {
        return re->Match(text, start, start + len, RE2::UNANCHORED, nullptr, 0);
    };
    modes(p, "RE2", hay, lines, reps, find, matches);
    delete re;
}
#endif

#ifdef HAVE_HS
struct HsCount {
    unsigned long long last_end;
    int64_t n, spans;
};

int on_match(unsigned, unsigned long long from, unsigned long long to, unsigned, void* ctx) {
    auto* c = static_cast<HsCount*>(ctx);
    if (from >= c->last_end && to > from) {
        c->n++;
        c->spans += int64_t(to - from);
        c->last_end = to;
    }
    return 0;
}

int on_first(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
    *static_cast<bool*>(ctx) = true;
    return 1;  // stop: the line matches
}

bool hs_build(const Pattern& p, unsigned flags, hs_database_t** db, hs_scratch_t** scratch,
              int64_t* ns) {
    hs_compile_error_t* err = nullptr;
    if (p.unicode) flags |= HS_FLAG_UTF8 | HS_FLAG_UCP;
    *ns = elapsed([&] {
        if (hs_compile(p.text.c_str(), flags, HS_MODE_BLOCK, nullptr, db, &err) == HS_SUCCESS)
            hs_alloc_scratch(*db, scratch);
    });
    if (err) {
        error(p, "Hyperscan", err->message);
        hs_free_compile_error(err);
        return false;
    }
    return true;
}

void run_hyperscan(const Pattern& p, const std::string& hay, const std::vector<Line>& lines, int reps) {
    hs_database_t *db = nullptr, *first = nullptr;
    hs_scratch_t* scratch = nullptr;
    int64_t ns, ns_first;
    if (!hs_build(p, HS_FLAG_SINGLEMATCH, &first, &scratch, &ns_first)) return;
    compiled(p, "Hyperscan", ns_first);
    bool spans_ok = hs_build(p, HS_FLAG_SOM_LEFTMOST, &db, &scratch, &ns);
    auto scan = [&](bool spans) {
        HsCount c{0, 0, 0};
        hs_scan(db, hay.data(), hay.size(), 0, scratch, on_match, &c);
        return spans ? c.spans : c.n;
    };
    if (spans_ok) {
        measure(p, "Hyperscan", "count", reps, [&] { return scan(false); });
        measure(p, "Hyperscan", "spans", reps, [&] { return scan(true); });
    }
    measure(p, "Hyperscan", "lines", reps, [&] {
        int64_t n = 0;
        for (const Line& l : lines) {
            bool hit = false;
            hs_scan(first, hay.data() + l.start, l.len, 0, scratch, on_first, &hit);
            n += hit;
        }
        return n;
    });
    hs_free_scratch(scratch);
    if (db) hs_free_database(db);
    hs_free_database(first);
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: engines HAYSTACK PATTERNS REPS\n");
        return 2;
    }
    std::ifstream hf(argv[1], std::ios::binary);
    std::stringstream hs;
    hs << hf.rdbuf();
    std::string hay = hs.str();
    std::vector<Line> lines = lines_of(hay);
    int reps = std::atoi(argv[3]);
    std::ifstream pf(argv[2]);
    std::string row;
    while (std::getline(pf, row)) {
        size_t a = row.find('\t'), b = row.find('\t', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        Pattern p{row.substr(0, a), row.substr(a + 1, b - a - 1) == "u", row.substr(b + 1)};
#ifdef HAVE_PCRE2
        run_pcre2(p, hay, lines, reps);
#endif
#ifdef HAVE_RE2
        run_re2(p, hay, lines, reps);
#endif
#ifdef HAVE_HS
        run_hyperscan(p, hay, lines, reps);
#endif
        std::fflush(stdout);
    }
    return 0;
}
