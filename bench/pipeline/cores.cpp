// SPDX-License-Identifier: Apache-2.0
// Per-sample cost of the comparison filters' own C/C++ cores, for bench/pipeline/run.
//
// The cores are not in this repository: bench/pipeline/run takes them from the PyPI source
// distributions of `vqf` (vqf/cpp/vqf.cpp, the full VQF class) and `imufusion` (xio Fusion's
// Fusion/*.c) and compiles them with this file at -O2. This file only feeds them samples and times
// them, under the same rules as PipelineBench (main.swift next to this file):
//
// - the same samples: the recording is parsed like RecordingFormat (comments, blank lines and the
//   header skipped) and repeated end to end until there are --samples of them (default 1,000,000);
// - the same rate: the recording's median sample period, fixed (neither core takes a per-sample dt);
// - each core gets the samples in its own units (VQF: rad/s and m/s², double; Fusion: °/s and g,
//   float), converted before timing, so the timed loop holds only the filter calls;
// - every output quaternion is read and summed (printed as a checksum), so no call can be dropped;
// - a warm-up run, then the best of --repeats runs (default 3), each with a fresh filter.
//
//   cores --recording config/demo/head.csv [--samples N] [--repeats N] [--dump N]
// Prints one line per core: "core<TAB>name<TAB>ns per sample<TAB>checksum". --dump N instead prints
// each core's first N quaternions (w x y z), untimed, to check this driver's units and settings
// against the Python packages bench/accuracy runs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "vqf.hpp"
#include "Fusion.h"

namespace {

// One recorded row, in the recording's SI units.
struct Row {
    int64_t t;
    double acc[3];  // m/s²
    double gyr[3];  // rad/s
};

constexpr double standardGravity = 9.80665;  // m/s² per g, as bench/accuracy/others.py converts
constexpr double degreesPerRadian = 57.29577951308232;

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "cores: %s\n", message.c_str());
    std::exit(1);
}

// Reads a tiltd recording (see Sources/TiltCore/Model/RecordingFormat.swift). A malformed row is an
// error: silently skipping it would make the two programs time different samples.
std::vector<Row> readRecording(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail("cannot read " + path + " (run from the repository root)");
    std::vector<Row> rows;
    std::string line;
    int lineNumber = 0;
    while (std::getline(in, line)) {
        ++lineNumber;
        size_t start = line.find_first_not_of(" \t\r");
        if (start == std::string::npos || line[start] == '#' || line.compare(start, 4, "t_ns") == 0) continue;
        Row r;
        const char* p = line.c_str() + start;
        char* end = nullptr;
        r.t = std::strtoll(p, &end, 10);
        double* fields[6] = {&r.acc[0], &r.acc[1], &r.acc[2], &r.gyr[0], &r.gyr[1], &r.gyr[2]};
        bool ok = end != p;
        for (double* f : fields) {
            if (!ok || *end != ',') { ok = false; break; }
            p = end + 1;
            *f = std::strtod(p, &end);
            ok = end != p;
        }
        if (!ok) fail(path + ":" + std::to_string(lineNumber) + ": not a t_ns,ax,ay,az,gx,gy,gz row");
        rows.push_back(r);
    }
    if (rows.size() < 2) fail(path + ": fewer than two samples");
    return rows;
}

// The recording repeated end to end until there are `count` rows (timestamps are not used: both
// cores run at a fixed rate).
std::vector<Row> repeatTo(const std::vector<Row>& recording, size_t count) {
    std::vector<Row> rows;
    rows.reserve(count);
    while (rows.size() < count)
        for (const Row& r : recording) {
            if (rows.size() == count) break;
            rows.push_back(r);
        }
    return rows;
}

// The median sample period (s), as bench/accuracy derives each filter's rate.
double medianPeriod(const std::vector<Row>& recording) {
    std::vector<int64_t> steps;
    for (size_t i = 1; i < recording.size(); ++i) steps.push_back(recording[i].t - recording[i - 1].t);
    std::sort(steps.begin(), steps.end());
    size_t mid = steps.size() / 2;
    // numpy's median: the mean of the two middle values when the count is even.
    double median = steps.size() % 2 ? double(steps[mid]) : 0.5 * (double(steps[mid - 1]) + double(steps[mid]));
    return median * 1e-9;
}

struct Timing {
    double nsPerSample;
    double checksum;
};

// Warm-up, then the best of `repeats` runs of `run` (which returns its checksum).
Timing best(int repeats, size_t samples, const std::function<double()>& run) {
    Timing result{1e300, 0};
    result.checksum += run();
    for (int i = 0; i < repeats; ++i) {
        auto start = std::chrono::steady_clock::now();
        double checksum = run();
        auto stop = std::chrono::steady_clock::now();
        double ns = std::chrono::duration<double, std::nano>(stop - start).count() / double(samples);
        result.nsPerSample = std::min(result.nsPerSample, ns);
        result.checksum += checksum;
    }
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    std::string path = "config/demo/head.csv";
    size_t target = 1000000;
    int repeats = 3;
    size_t dump = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--samples" && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
        else if (a == "--recording" && i + 1 < argc) path = argv[++i];
        else if (a == "--dump" && i + 1 < argc) dump = std::strtoull(argv[++i], nullptr, 10);
        else fail("usage: cores [--recording FILE] [--samples N] [--repeats N] [--dump N]");
    }
    if (target == 0 || repeats < 1) fail("--samples and --repeats must be positive");

    const std::vector<Row> recording = readRecording(path);
    const std::vector<Row> rows = repeatTo(recording, target);
    const double period = medianPeriod(recording);

    // Compile-time switches, so the timed loops hold neither printing code nor a branch for it.
    constexpr std::false_type silent{}, withoutBias{};
    constexpr std::true_type printing{}, withBias{};

    // VQF: double precision, SI units, interleaved like its own batch interface.
    std::vector<vqf_real_t> vqfGyr(3 * rows.size()), vqfAcc(3 * rows.size());
    // Fusion: float, °/s and g (the units its API takes).
    std::vector<FusionVector> fusionGyr(rows.size()), fusionAcc(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            vqfGyr[3 * i + k] = rows[i].gyr[k];
            vqfAcc[3 * i + k] = rows[i].acc[k];
            fusionGyr[i].array[k] = float(rows[i].gyr[k] * degreesPerRadian);
            fusionAcc[i].array[k] = float(rows[i].acc[k] / standardGravity);
        }

    // VQF with its default parameters (rest and motion bias estimation on), 6D output.
    auto runVQF = [&](auto dumpTag, size_t count) {
        VQF vqf(period);
        double sum = 0;
        vqf_real_t q[4];
        for (size_t i = 0; i < count; ++i) {
            vqf.update(&vqfGyr[3 * i], &vqfAcc[3 * i]);
            vqf.getQuat6D(q);
            sum += q[0];
            if constexpr (decltype(dumpTag)::value)
                std::printf("VQF\t%zu\t%.9g %.9g %.9g %.9g\n", i, q[0], q[1], q[2], q[3]);
        }
        return sum;
    };

    // Fusion's AHRS with the settings bench/accuracy/others.py gives imufusion.
    FusionAhrsSettings settings = fusionAhrsDefaultSettings;
    settings.sampleRate = float(1.0 / period);
    settings.convention = FusionConventionNwu;
    settings.gain = 0.5f;
    settings.gyroscopeRange = 2000.0f;
    settings.accelerationRejection = 10.0f;
    settings.magneticRejection = 0.0f;
    settings.rejectionTimeout = 5.0f;
    auto runFusion = [&](auto dumpTag, auto biasTag, size_t count) {
        constexpr bool useBias = decltype(biasTag)::value;
        FusionAhrs ahrs;
        FusionAhrsInitialise(&ahrs);
        FusionAhrsSetSettings(&ahrs, &settings);
        // Fusion's own gyro bias estimator, which its documentation pairs with the AHRS (tiltd and
        // VQF estimate bias inside the filter; bench/accuracy runs Fusion without it).
        FusionBias bias;
        FusionBiasInitialise(&bias);
        FusionBiasSettings biasSettings = fusionBiasDefaultSettings;
        biasSettings.sampleRate = settings.sampleRate;
        FusionBiasSetSettings(&bias, &biasSettings);
        double sum = 0;
        for (size_t i = 0; i < count; ++i) {
            FusionVector gyr = fusionGyr[i];
            if constexpr (useBias) gyr = FusionBiasUpdate(&bias, gyr);
            FusionAhrsUpdateNoMagnetometer(&ahrs, gyr, fusionAcc[i]);
            FusionQuaternion q = FusionAhrsGetQuaternion(&ahrs);
            sum += q.element.w;
            if constexpr (decltype(dumpTag)::value)
                std::printf("Fusion%s\t%zu\t%.9g %.9g %.9g %.9g\n", useBias ? "+Bias" : "", i, q.element.w,
                            q.element.x, q.element.y, q.element.z);
        }
        return sum;
    };

    if (dump) {
        // The same calls as timed below, on the first samples only.
        size_t n = std::min(dump, rows.size());
        runVQF(printing, n);
        runFusion(printing, withoutBias, n);
        runFusion(printing, withBias, n);
        return 0;
    }

    std::printf("# %zu samples from %s (%zu per lap), fixed rate %.3f Hz\n", rows.size(), path.c_str(),
                recording.size(), 1.0 / period);
    const struct {
        const char* name;
        std::function<double()> run;
    } cores[] = {
        {"VQF (C++, default parameters)", [&] { return runVQF(silent, rows.size()); }},
        {"Fusion AHRS (C)", [&] { return runFusion(silent, withoutBias, rows.size()); }},
        {"Fusion AHRS + FusionBias (C)", [&] { return runFusion(silent, withBias, rows.size()); }},
    };
    for (const auto& core : cores) {
        Timing t = best(repeats, rows.size(), core.run);
        std::printf("core\t%s\t%.1f\t%.6g\n", core.name, t.nsPerSample, t.checksum);
        std::fflush(stdout);
    }
    return 0;
}
