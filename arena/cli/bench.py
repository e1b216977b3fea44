"""``arena bench``: the speed figures against their goals."""

from __future__ import annotations

import json

import click

from arena.cli.options import json_option


@click.command()
@click.option("--only", multiple=True, help="Run only this benchmark (repeatable).")
@click.option(
    "--seconds",
    type=click.FloatRange(min=0.05),
    default=2.0,
    show_default=True,
    help="Time per benchmark.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Workers of the field benchmarks (default: one per core).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Executor of the field benchmarks (ray: a local Ray instance, the [ray] extra).",
)
@json_option
def bench(
    only: tuple[str, ...], seconds: float, workers: int | None, executor: str, as_json: bool
) -> None:
    """Measure the project's speed figures, each on one core except the tournament and field
    benchmarks, which use every core: fields of 5 to 300 copies of the scaffolded pure-Python
    bot play fixed36 for at least a minute each (games per second with the hosts' starts, and the
    peak memory of every process together), and first_game_seconds_cold runs the README's main
    command with empty caches. Each figure is marked against its goal (met, missed, or no
    goal; --json gives the goal and the mark per figure). docs/benchmarks.md has the figures
    measured here."""
    from collections import Counter

    from arena.bench.goals import judge
    from arena.bench.measure import BENCHMARKS, FIELD, machine, run

    FIELD.workers = workers
    FIELD.executor = executor

    unknown = [k for k in only if k not in BENCHMARKS]
    if unknown:
        raise click.BadParameter(
            f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})",
            param_hint="--only",
        )
    results = run(list(only), seconds)
    verdicts = {key: judge(BENCHMARKS[key].goal, value, results) for key, value in results.items()}
    if as_json:
        figures = {}
        for key, value in results.items():
            goal = BENCHMARKS[key].goal
            figures[key] = {
                "value": value,
                "unit": BENCHMARKS[key].unit,
                "goal": None if goal is None else goal.to_json(),
                "bound": verdicts[key].bound,
                "status": verdicts[key].status,
            }
        click.echo(json.dumps({"figures": figures, "machine": machine()}, indent=2))
        return
    info = machine()
    click.echo(
        f"machine: {info['cpu']}, {info['cores']} cores, "
        f"Python {info['python']}, numba {info['numba']}"
    )

    def shown(value: float) -> str:
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"

    for key, value in results.items():
        b, verdict = BENCHMARKS[key], verdicts[key]
        if b.goal is None:
            mark = "no goal"
        elif verdict.status == "unchecked":
            mark = f"unchecked: goal {b.goal}, and {b.goal.of} was not measured"
        elif b.goal.of is not None and verdict.bound is not None:
            mark = f"{verdict.status}: goal {b.goal} ({shown(verdict.bound)})"
        else:
            mark = f"{verdict.status}: goal {b.goal}"
        click.echo(f"{key:<40} {shown(value):>12} {b.unit:<12} {mark}")
    counts = Counter(v.status for v in verdicts.values())
    click.echo(
        f"goals: {counts['met']} met, {counts['missed']} missed"
        + (f", {counts['unchecked']} unchecked" if counts["unchecked"] else "")
        + f"; {counts['no goal']} without a goal"
    )


COMMANDS: tuple[click.Command, ...] = (bench,)
