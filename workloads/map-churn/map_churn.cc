// hs-wl-map-churn — the recorder's counting hot path under the most common C++
// allocations: std::map nodes, std::string buffers and plain new/delete.
//
// Each operation inserts a key into a std::map<int, std::string> working set with a
// value string longer than the small-string buffer (a map node and a string buffer,
// both through operator new), erases a pseudo-random old key once the set is full
// (two sized operator deletes), and replaces two random slots of a ring of small
// plain-new objects (16 and 32 bytes: new + delete each). Four allocations and, at
// steady state, four frees per operation, all through operator new/delete; no
// other work to speak of, so the allocator's and the recorder's costs show.
#include <map>
#include <string>

#include "wl_common.h"

struct Tag {               // 16 bytes
    uint64_t id;
    uint64_t check;
};

struct Sample {            // 32 bytes
    uint64_t id;
    double value[2];
    uint64_t check;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    return x ^ (x >> 27);
}

// One multiply per value: the checksum should cost little next to the allocations.
static uint64_t fold(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static void corrupted(const char *what)
{
    fprintf(stderr, "hs-wl-map-churn: %s contents corrupted\n", what);
    exit(1);
}

// A value string of 16..63 characters (past the 15 of the small-string buffer),
// derived from the key so that its reader can check it.
static std::string value_of(int key)
{
    const uint64_t m = mix((uint64_t)key);
    std::string s(16 + m % 48, 'a');
    for (size_t i = 0; i < s.size(); i += 8)
        s[i] = (char)('a' + (m >> (i % 56)) % 26);
    return s;
}

static uint64_t retire_value(uint64_t h, int key, const std::string &s)
{
    const uint64_t m = mix((uint64_t)key);
    if (s.size() != 16 + m % 48 || s[0] != (char)('a' + m % 26) ||
        s[8] != (char)('a' + (m >> 8) % 26))
        corrupted("string");
    return fold(h, (uint64_t)key ^ ((uint64_t)s.size() << 32) ^ ((uint64_t)(unsigned char)s[8] << 40));
}

static uint64_t retire_tag(uint64_t h, const Tag *t)
{
    if (t->check != mix(t->id))
        corrupted("Tag");
    return fold(h, t->id);
}

static uint64_t retire_sample(uint64_t h, const Sample *s)
{
    if (s->check != mix(s->id) || s->value[1] != 2.0 * s->value[0])
        corrupted("Sample");
    return fold(h, s->id ^ ((uint64_t)s->value[0] << 32));
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"ops", "operations (4 allocations each)", 7500000, 0, 1000000000},
        {"working-set", "map entries kept alive", 1024, 1, 10000000},
        {"objects", "small objects of each kind kept alive", 64, 1, 10000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv,
             "std::map<int, std::string> inserts and erases plus plain new/delete of small objects.",
             opts, 4);
    const long long ops = opts[0].value;
    const size_t working_set = (size_t)opts[1].value;
    const size_t nobjects = (size_t)opts[2].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[3].value);

    std::map<int, std::string> table;
    Tag **tags = (Tag **)wl_check(calloc(nobjects, sizeof *tags), "tags");
    Sample **samples = (Sample **)wl_check(calloc(nobjects, sizeof *samples), "samples");
    uint64_t h = WL_FNV_INIT;
    for (long long op = 0; op < ops; op++) {
        // keys: a permutation of the operation numbers (odd multiplier mod 2^31)
        const int key = (int)(((uint64_t)op * 2654435761u) & 0x7fffffff);
        table.emplace(key, value_of(key));
        if (table.size() > working_set) {
            auto it = table.lower_bound((int)(wl_rng_next(&rng) & 0x7fffffff));
            if (it == table.end())
                it = table.begin();
            h = retire_value(h, it->first, it->second);
            table.erase(it);
        }
        Tag *&t = tags[wl_rng_next(&rng) % nobjects];
        if (t) {
            h = retire_tag(h, t);
            delete t;
        }
        t = new Tag{(uint64_t)op, mix((uint64_t)op)};
        Sample *&s = samples[wl_rng_next(&rng) % nobjects];
        if (s) {
            h = retire_sample(h, s);
            delete s;
        }
        const double v = (double)(op % 1000);
        s = new Sample{(uint64_t)op, {v, 2.0 * v}, mix((uint64_t)op)};
    }
    for (const auto &kv : table)
        h = retire_value(h, kv.first, kv.second);
    for (size_t i = 0; i < nobjects; i++) {
        if (tags[i]) {
            h = retire_tag(h, tags[i]);
            delete tags[i];
        }
        if (samples[i]) {
            h = retire_sample(h, samples[i]);
            delete samples[i];
        }
    }
    free(tags);
    free(samples);
    printf("map-churn: %lld operations, %zu entries live at the end\n", ops, table.size());
    wl_print_checksum(h);
    return 0;
}
