// compaction: one compaction run, its controlled input reader, the throughput limiter, candidates of sstables.
#include "compaction/compaction.hh"

#include "reader/combined_reader.hh"
#include "reader/compacting_reader.hh"
#include "runtime/blocking.hh"
#include "runtime/log.hh"
#include "runtime/with_closeable.hh"
#include "sstables/shared_sstable_readers.hh"

#include <algorithm>
#include <sys/stat.h>

namespace reef::compaction {

namespace {

logger clog("compaction");

// The merged inputs as the compaction reads them: before each buffer it yields to the foreground (the background
// class, whose shares the backlog controller sets: its next read is submitted after the reads of the foreground
// tasks ready now), stops if asked, and paces the bytes its inputs read to the shard's throughput limit; it counts
// them as the compaction's progress.
class controlled_reader final : public mutation_reader_impl {
public:
    controlled_reader(mutation_reader src, std::vector<std::shared_ptr<sstables::scan_progress>> inputs,
                      compaction_control& ctl)
        : mutation_reader_impl(src.schema()), _src(std::move(src)), _inputs(std::move(inputs)), _ctl(ctl) {}

    future<> fill_buffer() override {
        co_await background_yield();
        if (_ctl.stopping()) {
            throw compaction_stopped(_ctl.stop_reason);
        }
        co_await _src.fill_buffer();
        _src.move_buffer_content_to(_buffer);
        _end_of_stream = _src.is_end_of_stream() && _src.is_buffer_empty();
        // Progress: the bytes its inputs' full scans read (with read-ahead, so capped at the total).
        uint64_t read = 0;
        for (auto& p : _inputs) {
            read += p->bytes;
        }
        read = std::min(read, _ctl.total_bytes);
        auto delta = read > _ctl.completed_bytes ? read - _ctl.completed_bytes : 0;
        _ctl.completed_bytes = std::max(_ctl.completed_bytes, read);
        if (_ctl.limiter && delta) {
            co_await _ctl.limiter->consume(delta);
        }
    }
    future<> next_partition() override {
        clear_buffer();
        return _src.next_partition();
    }
    future<> fast_forward_to(const dht::partition_range& pr) override {
        clear_buffer();
        _end_of_stream = false;
        return _src.fast_forward_to(pr);
    }
    future<> fast_forward_to(position_range pr) override {
        clear_buffer();
        _end_of_stream = false;
        return _src.fast_forward_to(std::move(pr));
    }
    future<> close() noexcept override { return _src.close(); }

private:
    mutation_reader _src;
    std::vector<std::shared_ptr<sstables::scan_progress>> _inputs;
    compaction_control& _ctl;
};

using interval_list = std::vector<std::pair<sstables::commitlog_position, sstables::commitlog_position>>;

// The union of intervals, sorted and with overlapping ones merged (Cassandra's IntervalSet).
interval_list merge_intervals(interval_list in) {
    auto key = [](const sstables::commitlog_position& p) { return std::pair(p.segment_id, p.position); };
    std::sort(in.begin(), in.end(), [&](auto& a, auto& b) { return key(a.first) < key(b.first); });
    interval_list out;
    for (auto& i : in) {
        if (!out.empty() && key(i.first) <= key(out.back().second)) {
            if (key(i.second) > key(out.back().second)) {
                out.back().second = i.second;
            }
        } else {
            out.push_back(i);
        }
    }
    return out;
}

int64_t token_of(const sstables::shared_sstable& sst, const std::string& key) {
    auto& tf = sst->token();
    if (tf) {
        return tf(bytes_view(reinterpret_cast<const uint8_t*>(key.data()), key.size())).value();
    }
    return dht::murmur3_token(std::span<const char>(key.data(), key.size())).value();
}

// Writes the stream as planned[0], then, each time one stops at max_output_size, on into the next (the last
// planned one unbounded); an output left empty is deleted. Opens each output into `outputs`; returns their
// Data.db sizes summed.
future<uint64_t> write_outputs(table_state& t, mutation_reader& r, const std::vector<sstables::descriptor>& planned,
                               const sstables::writer_options& opts, uint64_t max_output_size,
                               std::vector<sstables::shared_sstable>& outputs) {
    uint64_t written = 0;
    for (size_t i = 0; i < planned.size(); ++i) {
        auto o = opts;
        o.max_data_length = i + 1 < planned.size() ? max_output_size : 0;
        auto w = co_await t.write_sstable(r, planned[i], o);
        if (!w.partitions) {
            co_await sstables::delete_sstable_files(planned[i]);
            break;
        }
        outputs.push_back(co_await sstables::open_sstable(planned[i]));
        written += w.data_file_size;
        if (!w.stopped_at_length) {
            break;
        }
    }
    co_return written;
}

} // namespace

future<> throughput_limiter::consume(uint64_t bytes) {
    if (_rate == 0) {
        co_return;
    }
    auto now = steady_clock_type::now();
    auto burst = std::chrono::milliseconds(100);
    if (_next < now - burst) {
        _next = now - burst;
    }
    _next += std::chrono::duration_cast<steady_clock_type::duration>(std::chrono::duration<double>(double(bytes) / double(_rate)));
    if (_next > now) {
        co_await sleep(_next - now);
    }
}

candidate candidate_of(const sstables::shared_sstable& sst, uint64_t id, deletion_time_type gc_before) {
    candidate c;
    c.id = id;
    c.size = sst->components().data_file_size;
    c.min_timestamp = sst->min_timestamp();
    c.max_timestamp = sst->max_timestamp();
    if (auto& st = sst->statistics().stats) {
        int64_t mldt = st->max_local_deletion_time;
        if (st->uint_deletion_time && mldt < 0) {
            mldt = INT32_MAX;  // oa's unsigned "no deletion"
        }
        c.max_local_deletion_time = int32_t(std::min<int64_t>(mldt, INT32_MAX));
        // Cassandra's getDroppableTombstonesBefore over the cells it holds.
        double droppable = 0;
        for (auto& [point, count] : st->estimated_tombstone_drop_time.bins) {
            if (point <= double(gc_before)) {
                droppable += double(count);
            }
        }
        double cells = std::max<double>(double(st->total_columns_set), droppable);
        c.droppable_tombstone_ratio = cells > 0 ? droppable / cells : 0;
    }
    auto& summary = sst->components().summary;
    if (!summary.first_key.empty() || !summary.last_key.empty()) {
        c.first_token = token_of(sst, summary.first_key);
        c.last_token = token_of(sst, summary.last_key);
        if (c.first_token > c.last_token) {
            std::swap(c.first_token, c.last_token);
        }
    }
    return c;
}

future<int64_t> sstable_age(const sstables::shared_sstable& sst, int64_t now) {
    auto path = sst->desc().filename(sstables::component_type::data);
    auto written = co_await run_blocking([&path] {
        struct stat st {};
        return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_mtime) : int64_t(0);
    });
    co_return written ? std::max<int64_t>(0, now - written) : 0;
}

bool may_purge(const std::vector<sstables::shared_sstable>& ssts, deletion_time_type gc_before) {
    for (auto& sst : ssts) {
        auto& st = sst->statistics().stats;
        if (!st) {
            return true;
        }
        int64_t min_ldt = st->uint_deletion_time ? int64_t(uint32_t(st->min_local_deletion_time))
                                                 : int64_t(st->min_local_deletion_time);
        if (min_ldt < int64_t(gc_before)) {
            return true;
        }
    }
    return false;
}

future<uint64_t> compact_sstables(table_state& t, std::vector<sstables::shared_sstable> inputs, job_kind kind,
                                  deletion_time_type now, compaction_control& ctl, uint64_t max_output_size) {
    auto& s = t.schema();
    for (auto& sst : inputs) {
        ctl.total_bytes += sst->components().data_file_size;
    }
    auto gc_before = now - s->options().gc_grace_seconds;
    if (kind == job_kind::expired) {
        // Everything in them expired past gc_grace and shadows nothing outside: dropped unread, through a logged
        // swap all the same (a crash in the middle of several deletions is completed at start).
        if (ctl.stopping()) {
            throw compaction_stopped(ctl.stop_reason);
        }
        std::vector<sstables::descriptor> none;
        auto swap = co_await t.begin_swap(inputs, none);
        co_await swap.commit();
        co_await t.replace_sstables(inputs, {}, true);
        co_await swap.finish();
        ctl.completed_bytes = ctl.total_bytes;
        co_return 0;
    }
    // The outputs are planned (logged) before any is written: as many as a run of max_output_size could take
    // (the merged data is at most the inputs' data; the last one takes whatever is left).
    std::vector<sstables::descriptor> planned{t.new_sstable_descriptor()};
    if (max_output_size) {
        uint64_t input_length = 0;
        for (auto& sst : inputs) {
            input_length += sst->components().data_length();
        }
        while (planned.size() < input_length / max_output_size + 2) {
            planned.push_back(t.new_sstable_descriptor());
        }
    }
    auto swap = co_await t.begin_swap(inputs, planned);
    std::vector<combined_reader_source> sources;
    std::vector<std::shared_ptr<sstables::scan_progress>> progress;
    for (auto& sst : inputs) {
        progress.push_back(std::make_shared<sstables::scan_progress>());
        sources.push_back({sstables::make_sstable_full_scan_reader(sst, s, progress.back()), sst->max_timestamp(),
                           streamed_forwarding::no});
    }
    auto combined = make_combined_reader(s, std::move(sources), false, streamed_forwarding::no);
    auto controlled = mutation_reader(std::make_unique<controlled_reader>(std::move(combined), std::move(progress), ctl));
    auto reader = make_compacting_reader(std::move(controlled), now, compaction_mode::compaction, gc_before,
                                         [&t, &inputs](const dht::decorated_key& k) { return t.max_purgeable(k, inputs); });
    // The output holds what its inputs held of the commitlog: the union of their intervals.
    auto opts = sstables::writer_options_for(*s);
    interval_list intervals;
    for (auto& sst : inputs) {
        if (auto& st = sst->statistics().stats) {
            intervals.insert(intervals.end(), st->commitlog_intervals.begin(), st->commitlog_intervals.end());
        }
    }
    opts.commitlog_intervals = merge_intervals(std::move(intervals));
    std::vector<sstables::shared_sstable> outputs;
    uint64_t written = 0;
    std::exception_ptr err;
    try {
        auto write = [&t, &planned, &opts, &outputs, max_output_size](mutation_reader& r) {
            return write_outputs(t, r, planned, opts, max_output_size, outputs);
        };
        written = co_await with_closeable(std::move(reader), write);
    } catch (const sstables::injected_crash&) {
        throw;  // a test's crash: the files stay as they are
    } catch (...) {
        err = std::current_exception();
    }
    if (err) {
        // A failure or a stop before the commit: the partial outputs go, the inputs stay.
        for (auto& o : outputs) {
            co_await o->close();
        }
        co_await swap.abort();
        std::rethrow_exception(err);
    }
    swap.step("outputs written");
    co_await swap.commit();
    co_await t.replace_sstables(inputs, outputs, may_purge(inputs, gc_before));
    co_await swap.finish();
    ctl.completed_bytes = ctl.total_bytes;
    clog.debug("{}.{}: compacted {} sstables ({} bytes) into {} ({} bytes)", s->keyspace(), s->table(), inputs.size(),
               ctl.total_bytes, outputs.size(), written);
    co_return written;
}

} // namespace reef::compaction
