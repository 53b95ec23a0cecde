"""AnomalyDetect: synthetic machine hums, normal or with a fault (clicks, whine, rattle, grinding), one fault per machine."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, clip, multi_episode, rng, seeded
from acousticbench.benchmarks.audioicl.build.sounds import band_noise, frames

OBJECTS = ("fan", "pump", "compressor", "conveyor", "gearbox", "bearing")
FAULTS = ("clicks", "whine", "rattle", "grind")
MACHINES = len(OBJECTS) * len(FAULTS)  # every object with every fault
PER_CLASS = 8  # normal and anomalous recordings per machine: 5 demos and a query never repeat a clip
CLIP_S = 1.0


def machine(g: np.random.Generator, obj: str, fault: str) -> dict[str, Any]:
    """A machine and the one way it fails: the fault's pitch or rate is the machine's own, only its strength varies."""
    return {"object": obj, "f0_hz": round(float(np.exp(g.uniform(np.log(40), np.log(160)))), 2),
            "tilt": round(float(g.uniform(0.5, 1.5)), 3), "noise_hz": round(float(np.exp(g.uniform(np.log(300), np.log(2500)))), 1),
            "noise_db": round(float(g.uniform(-20, -10)), 2), "fault_kind": fault,
            "fault_hz": round(float({"clicks": g.uniform(2000, 5000), "whine": g.uniform(2500, 5000),
                                     "rattle": g.uniform(8, 20), "grind": g.uniform(1500, 4000)}[fault]), 1),
            "fault_rate_hz": round(float({"clicks": g.uniform(6, 14), "grind": g.uniform(2, 5)}.get(fault, 0.0)), 2)}


def plan(task: str) -> TaskPlan:
    order = rng(task, "plan")
    clips: dict[str, ClipJob] = {}
    pools = []
    for m in range(MACHINES):
        g = rng(task, "machine", m)
        obj, fault = OBJECTS[m % len(OBJECTS)], FAULTS[m // len(OBJECTS)]
        params = machine(g, obj, fault)
        names = order.permutation(2 * PER_CLASS)
        pool: dict[str, list[str]] = {"Normal": [], "Anomalous": []}
        for j in range(2 * PER_CLASS):
            label = "Normal" if j < PER_CLASS else "Anomalous"
            path = f"data/anomaly/{obj}/m{m:02d}_{names[j]:02d}.wav"
            clips[path] = ClipJob(path, "machine", seeded({**params, "faulty": label == "Anomalous"}, task, m, j))
            pool[label].append(path)
        pools.append((obj, pool))
    episodes = []
    for i in range(EPISODES_PER_TASK):
        obj, pool = pools[i % MACHINES]
        gt = ("Normal", "Anomalous")[(i + i // MACHINES) % 2]  # balanced, and not tied to the machine
        normal = [pool["Normal"][int(j)] for j in order.permutation(PER_CLASS)]
        anomalous = [pool["Anomalous"][int(j)] for j in order.permutation(PER_CLASS)]
        demos = [[clip("Normal", n, "Normal"), clip("Anomalous", a, "Anomalous")]
                 for n, a in zip(normal[:MAX_SHOTS], anomalous[:MAX_SHOTS])]
        query = (normal if gt == "Normal" else anomalous)[MAX_SHOTS]
        episodes.append(multi_episode(task, i, demos, [clip("Query", query, None)], gt, object=obj))
    return TaskPlan(episodes, clips)


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    n = frames(CLIP_S)
    t = np.arange(n) / 16000
    f0 = params["f0_hz"] * float(rng_.uniform(0.995, 1.005))  # a machine never runs at exactly the same speed
    harmonics = np.arange(1, int(4000 // f0) + 1)
    amps = harmonics ** -params["tilt"]
    x = sum(a * np.sin(2 * np.pi * f0 * h * t + rng_.uniform(0, 2 * np.pi)) for h, a in zip(harmonics, amps))
    x = x / np.sqrt(np.mean(x**2))
    noise = band_noise(n, rng_, params["noise_hz"], 1.2)
    x = x + noise / np.sqrt(np.mean(noise**2)) * 10 ** (params["noise_db"] / 20)
    if params["faulty"]:
        x = fault(x, params, rng_)
    return 0.1 * x / np.sqrt(np.mean(x**2))


def fault(x: np.ndarray, machine_: dict[str, Any], g: np.random.Generator) -> np.ndarray:
    """The hum with the machine's fault added at a level a careful listener hears (6-12 dB below the hum, or clicks)."""
    n, t = x.size, np.arange(x.size) / 16000
    kind, hz, rate = machine_["fault_kind"], machine_["fault_hz"], machine_["fault_rate_hz"]
    hz, rate = hz * float(g.uniform(0.98, 1.02)), rate * float(g.uniform(0.95, 1.05))
    level = 10 ** (float(g.uniform(-12, -6)) / 20)
    if kind == "clicks":  # a damaged bearing: impulses at a steady rate
        period = frames(1 / rate)
        click = band_noise(frames(0.004), g, hz, 0.8)
        click *= 6.0 / np.abs(click).max()
        for start in range(int(g.integers(period)), n - click.size, period):
            x[start : start + click.size] += click
        return x
    if kind == "whine":  # a worn part singing at a high pitch
        return x + np.sqrt(2) * level * np.sin(2 * np.pi * hz * t)
    if kind == "rattle":  # something loose: the hum throbs
        return x * (1.0 + 0.7 * np.sin(2 * np.pi * hz * t))
    grind = band_noise(n, g, hz, 0.5)  # grinding: a band of rough noise that comes and goes
    grind *= (0.5 + 0.5 * np.sin(2 * np.pi * rate * t)) / np.sqrt(np.mean(grind**2))
    return x + 2 * level * grind
