// hs-wl-cxx-churn — allocation churn from ordinary C++ containers, the workload of
// the profiler overhead benchmark (>= 10 M allocations at the default size).
//
// Each operation builds a record the way service-style C++ code does: a heap string
// key, a vector<int> grown by push_back, a shared_ptr<vector<double>> from
// make_shared, a list node of history; the record goes into a std::map working set
// and, once the set is full, a pseudo-random old record is read and erased.
// About 8 allocations per operation; the checksum hashes what the reads saw.
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wl_common.h"

struct Record {
    std::vector<int> values;
    std::shared_ptr<std::vector<double>> weights;
};

__attribute__((noinline)) static std::string makeKey(uint64_t id)
{
    std::string key = "record-";
    key += std::to_string(id);
    key += "-payload-key";           // longer than the small-string buffer: a heap block
    return key;
}

__attribute__((noinline)) static Record makeRecord(wl_rng *rng)
{
    Record r;
    const int n = 1 + (int)wl_rng_range(rng, 0, 11);
    for (int i = 0; i < n; i++)       // growth: 1, 2, 4, 8, 16 ints
        r.values.push_back((int)(wl_rng_next(rng) & 0xffff));
    r.weights = std::make_shared<std::vector<double>>(1 + n % 4, 0.5 * n);
    return r;
}

__attribute__((noinline)) static uint64_t consume(uint64_t h, const std::string &key, const Record &r)
{
    h = wl_hash_bytes(h, key.data(), key.size());
    for (int v : r.values)
        h = wl_hash_u64(h, (uint64_t)v);
    for (double w : *r.weights)
        h = wl_hash_bytes(h, &w, sizeof w);
    return h;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"ops", "records created (about 8 allocations each)", 1300000, 0, 1000000000},
        {"working-set", "records kept alive", 4096, 1, 10000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "Allocation churn from C++ containers (string, vector, map, list, shared_ptr).",
             opts, 3);
    const long long ops = opts[0].value;
    const size_t working_set = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    std::map<std::string, Record> table;
    std::list<uint64_t> history;
    std::vector<uint64_t> live_ids;   // ids in the table, for picking a victim
    live_ids.reserve(working_set + 1);
    uint64_t h = WL_FNV_INIT;
    for (long long op = 0; op < ops; op++) {
        table.emplace(makeKey((uint64_t)op), makeRecord(&rng));
        live_ids.push_back((uint64_t)op);
        history.push_back((uint64_t)op);
        if (history.size() > 64)
            history.pop_front();
        if (table.size() > working_set) {
            const size_t k = (size_t)wl_rng_range(&rng, 0, live_ids.size() - 1);
            auto it = table.find(makeKey(live_ids[k]));
            h = consume(h, it->first, it->second);
            table.erase(it);
            live_ids[k] = live_ids.back();
            live_ids.pop_back();
        }
    }
    for (const auto &kv : table)
        h = consume(h, kv.first, kv.second);
    for (uint64_t id : history)
        h = wl_hash_u64(h, id);
    printf("cxx-churn: %lld records, %zu live at the end\n", ops, table.size());
    wl_print_checksum(h);
    return 0;
}
