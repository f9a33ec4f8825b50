"""The human format: the box in a few lines, then the features (blocked first), the stack checks, the plan.

It reads at any width, 80 columns included (stackcheck.render.layout): a short status row per blocked or
unknown item that leads with what to do, then every reason wrapped under it with a hanging indent (never
cut), sources by id (`--sources` lists their titles and addresses); items with nothing to say share one
wrapped line (`✓ ok: a, b, c`); plan commands are one line each, or a `\\` continuation. Colour (ANSI) on a
terminal only; plain text when piped, with NO_COLOR or --output."""

from __future__ import annotations

import re
from collections.abc import Mapping

from stackcheck.facts.filled import filled_texts
from stackcheck.facts.model import KERNEL_PACKAGES, image_text, serving_elsewhere, shadow_texts, target_text
from stackcheck.knowledge.sources import collect, source_tag
from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.render.interface import value_text
from stackcheck.render.layout import UNLIMITED, Paint, output_width, shell_lines, wrap, wrap_items

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.documents.types import Report
    from stackcheck.plan.json_shapes import BlockedJSON, StepJSON
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict

STATUS_ORDER = {"blocked": 0, "unknown": 1, "ok": 2, "not-applicable": 3}
CHECK_ORDER = {"failed": 0, "warning": 1, "unknown": 2, "ok": 3, "skipped": 4}
MARK = {"blocked": "✗", "unknown": "?", "ok": "✓", "not-applicable": "-", "failed": "✗", "warning": "!", "skipped": "-"}
STYLE = {
    "blocked": "bold red",
    "unknown": "yellow",
    "ok": "green",
    "not-applicable": "dim",
    "failed": "bold red",
    "warning": "yellow",
    "skipped": "dim",
}

PACKAGE_ORDER = [
    "torch",
    *KERNEL_PACKAGES[::-1],
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "vllm",
    "triton",
    "nvidia-nccl-cu13",
    "nvidia-nccl-cu12",
]

INDENT = "    "  # the hanging indent of a reason under its row
NO_WRAP = UNLIMITED  # a width that never wraps (markdown cells, piped output)


class Row:
    """One feature or check as the human formats show it (a plain class: a dataclass costs start-up time)."""

    __slots__ = ("action", "effect", "group", "id", "note", "reasons", "status")

    def __init__(self, status: str, id: str, effect: str = "") -> None:
        self.status = status
        self.id = id
        self.effect = effect
        self.action = ""  # what to do about this one, first; "" when there is nothing to do
        self.group = ""  # what to do about several (the plan step that fixes them): heads them
        self.reasons: list[str] = []  # every failing (or unknown) reason, in full
        self.note = ""  # an ok row's note (locally patched, a pass note)

    @property
    def word(self) -> str:
        """The status as one short word: the effect of a blocked feature, else the status."""
        return self.effect or self.status

    def text(self) -> str:
        """Action, then every reason, on one line (markdown cells, the old one-line shape)."""
        parts = [f"→ {self.group}"] if self.group else []
        parts += [f"→ {self.action}"] if self.action else []
        parts += self.reasons or ([self.note] if self.note else [])
        return " · ".join(parts)


# ---- the box ------------------------------------------------------------------------------------------


def header_parts(report: Report) -> list[str]:
    tool: Mapping[str, Any] = report.get("tool") or {}
    man: Mapping[str, Any] = report.get("manifests") or {}
    host = report.get("host") or {}
    data = str(man.get("data_version", "?"))
    date = man.get("date")
    manifests = f"manifests {data}" + (f" ({date})" if date and str(date).replace("-", ".") != data else "")
    return [
        f"stackcheck {tool.get('version', '?')}",
        manifests,
        f"host {host.get('hostname') or 'unknown'}",
        str(host.get("collected_at", "?")),
    ]


def driver_error(report: Report) -> str | None:
    driver = (report.get("facts") or {}).get("driver") or {}
    err = driver.get("error")
    return str(err) if err and not driver.get("version") else None


def box_parts(report: Report) -> tuple[list[str], list[str]]:
    """(box, stack): the GPUs, link and driver; the serving packages and the build toolkit."""
    facts = report.get("facts") or {}
    gpus = facts.get("gpus")
    driver = facts.get("driver") or {}
    topo = facts.get("topology") or {}
    box: list[str] = []
    if gpus:
        models: dict[str, int] = {}
        for g in gpus:
            key = f"{g.get('name') or 'GPU'} (cc {g.get('compute_capability') or '?'})"
            models[key] = models.get(key, 0) + 1
        box += [f"{n}× {k}" for k, n in models.items()]
    elif gpus is None:
        box.append("GPUs unknown")
    else:
        box.append("no GPU visible")
    if topo.get("interconnect"):
        box.append(f"interconnect {topo['interconnect']}")
    if topo.get("p2p"):
        box.append(f"P2P {topo['p2p']}")
    if driver.get("version"):
        box.append(f"driver {driver['version']} (CUDA {driver.get('cuda') or '?'})")
    else:
        box.append("driver unknown" + (f": {driver['error']}" if driver.get("error") else ""))
    pkgs = facts.get("packages") or {}
    stack = []
    for name in PACKAGE_ORDER:
        p = pkgs.get(name)
        if isinstance(p, dict) and p.get("installed"):
            stack.append(f"{name} {p.get('version') or '(version not known)'}")
    tk = [t for t in facts.get("cuda_toolkits") or [] if t.get("active_for_build")]
    if tk:
        stack.append(f"toolkit {tk[0].get('version')}")
    if not stack:
        unknown = not pkgs or all(
            isinstance(p, dict) and p.get("error") and not p.get("installed") for p in pkgs.values()
        )
        stack.append("packages unknown" if unknown else "none of the serving packages")
    return box, stack


def box_lines(report: Report, width: int = NO_WRAP) -> list[str]:
    facts = report.get("facts") or {}
    lines = wrap_items(header_parts(report), width, "", "  ")
    box, stack = box_parts(report)
    lines += wrap_items(box, width, "box:   ", "       ")
    lines += wrap_items(stack, width, "stack: ", "       ")
    image = image_text(facts)
    if image:
        lines += wrap(image, width, "       ", "image: ")
    target = target_text(facts)
    if target:
        lines += wrap(target, width, "       ", "env:   ")
    for shadow in shadow_texts(facts):  # the launch imports another copy than the installed one: judged instead
        lines += wrap(shadow, width, "       ", "note:  ")
    elsewhere = serving_elsewhere(facts)
    if elsewhere:
        lines += wrap(elsewhere, width, "       ", "note:  ")
    filled = filled_texts(facts)
    if filled:  # values the facts file left out, filled from the manifests' tables: the rules reading them say inferred
        lines += wrap("filled from the manifests, not stated: " + "; ".join(filled), width, "       ", "note:  ")
    if facts.get("assumed"):
        lines += wrap_items(
            [str(a) for a in facts["assumed"]], width, "assumed: ", "         ", sep=", "
        )  # a what-if: never mistaken for a measurement
    return lines


# ---- reasons ------------------------------------------------------------------------------------------


def first_reason(item: dict[str, Any]) -> dict[str, Any] | None:
    for r in item.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return dict(r)
    return None


_OPERATOR = lazy(r"^(one of |not one of |[!=<>]=? ?)")


def _mentions(message: str, value: Any) -> bool:
    """Whether the message already states the value (then the text need not repeat it): "one of [9, 10]"
    is stated by "[9, 10]", "!= 120" by "sm_120"; numbers match whole (12 is not in 120)."""
    if value is None:
        return False
    text = _OPERATOR.sub("", value_text(value)) if isinstance(value, str) else value_text(value)
    if not text:
        return False
    if isinstance(value, list | tuple) or text.startswith("["):
        return text in message
    if re.fullmatch(r"[\d.]+", text):
        return re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", message) is not None
    return re.search(rf"(?<![\w.]){re.escape(text)}(?![\w])", message) is not None


def reason_line(r: dict[str, Any], shared: str | None = None) -> str:
    """A reason in full: its message, the observed and required values unless the message states them,
    the GPU, a local patch, inferred, and its source ids. `shared`: a text printed once elsewhere (the
    driver's error) that the message may repeat."""
    text = str(r.get("message", ""))
    if shared and shared in text:
        text = text.replace(shared, "see the driver line above")
    if r.get("result") == "fail" and ("observed" in r or "required" in r):
        observed, required = r.get("observed"), r.get("required")
        if not (_mentions(text, observed) and _mentions(text, required)):
            text += f" [observed {value_text(observed)}; required {value_text(required)}]"
    if r.get("gpu"):
        text += f" on {r['gpu']}"
    if r.get("result") == "unknown":
        return text  # why it is unknown is a fact about the box, not the rule's source (and groups alike)
    if r.get("patched"):
        text += f" (locally patched: {r['patched']})"
    if r.get("inferred"):
        text += " (inferred)"
    tag = source_tag(r.get("source"))
    if tag:
        text += f" {tag}"
    return text


def _failing(item: FeatureVerdict | CheckVerdict) -> list[dict[str, Any]]:
    return [dict(r) for r in item.get("reasons") or [] if r.get("result") in ("fail", "unknown")]


# ---- what to do ---------------------------------------------------------------------------------------


class PlanIndex:
    """What the report's plan says about each feature: the step that unblocks it, or that none does."""

    def __init__(self) -> None:
        self.steps: dict[str, tuple[int, StepJSON]] = {}
        self.still: dict[str, BlockedJSON] = {}
        self.present = False

    @classmethod
    def of(cls, report: Report) -> PlanIndex:
        plan = report.get("plan")
        index = cls()
        if not isinstance(plan, dict) or plan.get("error"):
            return index
        index.present = True
        for i, step in enumerate(plan.get("steps") or [], 1):
            for fid in step.get("unblocks") or []:
                index.steps.setdefault(str(fid), (i, step))
        for b in plan.get("still_blocked") or []:
            if isinstance(b, dict) and b.get("feature"):
                index.still[str(b["feature"])] = b
        return index


def _turned_on_by(f: FeatureVerdict) -> str:
    enable = f.get("enable") or {}
    words = [str(x) for x in enable.get("flags") or []]
    words += [f"{k}={v}" for k, v in (enable.get("env") or {}).items()]
    return " ".join(words)


def _setting(w: Mapping[str, Any]) -> str:
    words = [f"{k}={v}" for k, v in (w.get("env") or {}).items()]
    flags = w.get("flags")
    if isinstance(flags, dict):
        words += [k if v is True else f"{k} {v}" for k, v in flags.items()]
    elif isinstance(flags, list):
        words += [str(x) for x in flags]
    return " ".join(words)


def feature_action(f: FeatureVerdict, plan: PlanIndex) -> tuple[str, str]:
    """(group, action): what to do about a blocked feature. The group is shared by several features (the
    plan step that fixes them, or that no upgrade does) and heads them; the action is the feature's own
    (the supported setting that avoids it now, which flag to leave off)."""
    if f.get("status") != "blocked":
        return "", ""
    fid = str(f.get("id"))
    effect = f.get("effect") or "crash"
    w = f.get("workaround")
    setting = _setting(w) if isinstance(w, dict) and w.get("upstream_supported") else ""
    hit = plan.steps.get(fid)
    if hit:
        n, step = hit
        group = (
            f"fixed by plan step {n} ({step.get('component')} {step.get('from') or 'not installed'} → {step.get('to')})"
        )
        return group, f"until then, set {setting}" if setting else ""
    still = plan.still.get(fid)
    if still and still.get("upstream_supported"):
        return "fixed by another target (stackcheck plan --want FEATURE)", f"stackcheck plan --want {fid}"
    group = "no upgrade fixes these here" if plan.present else ""
    flag = _turned_on_by(f)
    if setting:
        action = f"set {setting}"
    elif effect == "crash":
        action = f"leave {flag} off" if flag else "do not use it"
    elif effect == "wrong-output":  # it starts and answers: say so, the operator would take a start for a pass
        action = f"leave {flag} off: it starts but serves wrong output" if flag else "do not use it: wrong output"
    elif effect == "disabled":
        action = f"{flag} does nothing here" if flag else "off here"
    else:
        action = f"{flag} is slower here" if flag else "slower here"
    if isinstance(w, dict) and not w.get("upstream_supported"):
        action += "; an unsupported patch exists (see the plan)"
    return group, action


# ---- rows ---------------------------------------------------------------------------------------------


def feature_items(report: Report) -> list[Row]:
    plan = PlanIndex.of(report)
    shared = driver_error(report)
    rows = []
    for f in sorted(
        report.get("features") or [], key=lambda f: (STATUS_ORDER.get(f.get("status", ""), 9), f.get("id", ""))
    ):
        status = str(f.get("status", "?"))
        row = Row(status=status, id=str(f.get("id")), effect=str(f.get("effect") or ""))
        if status == "ok":
            patched = [x for x in f.get("reasons") or [] if x.get("patched")]
            notes = [
                str(x.get("message"))
                for x in f.get("reasons") or []
                if x.get("result") == "pass" and x.get("message") not in (None, "requirement met")
            ]
            row.note = ("locally patched: " + str(patched[0]["patched"])) if patched else (notes[0] if notes else "")
        elif status == "not-applicable":
            row.note = str((f.get("reasons") or [{}])[0].get("message", ""))
        else:
            row.group, row.action = feature_action(f, plan)
            row.reasons = _dedupe([reason_line(r, shared) for r in _failing(f)])
        rows.append(row)
    return rows


def check_items(report: Report) -> list[Row]:
    shared = driver_error(report)
    rows = []
    for c in sorted(
        report.get("checks") or [], key=lambda c: (CHECK_ORDER.get(c.get("status", ""), 9), c.get("id", ""))
    ):
        row = Row(status=str(c.get("status")), id=str(c.get("id")), effect=_check_word(c))
        if row.status not in ("ok", "skipped"):
            row.reasons = _dedupe([reason_line(r, shared) for r in _failing(c)])
        rows.append(row)
    return rows


def _check_word(c: CheckVerdict) -> str:
    """A failed check's word beside its status: "wrong-output" where its worst failing rule serves wrong output
    with no error (the launch starts: "failed" alone reads as a start failure), else none."""
    from stackcheck.verdicts import worst_effect

    worst = worst_effect(str(r.get("effect", "crash")) for r in c.get("reasons") or [] if r.get("result") == "fail")
    return worst if worst == "wrong-output" and c.get("status") == "failed" else ""


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def feature_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """(status, id, effect, text) per feature: the text is the action and every reason on one line."""
    return [(r.status, r.id, r.effect, r.text()) for r in feature_items(report)]


def check_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """(status, id, effect, text) per check: the effect only where it is wrong-output (_check_word)."""
    return [(r.status, r.id, r.effect, r.text()) for r in check_items(report)]


def _counts(rows: list[Row]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def section_lines(title: str, rows: list[Row], width: int, paint: Paint) -> list[str]:
    """A section: one row per item with something to say (its reasons under it), the rest grouped."""
    out = [f"{title}: {_counts(rows)}" if rows else f"{title}: none"]
    talk = [r for r in rows if r.reasons or r.action or (r.status == "ok" and r.note)]
    idw = min(28, max((len(r.id) for r in talk), default=0))
    wordw = max((len(r.word) for r in talk), default=0)
    # unknowns with one shared cause (no GPU, no packages): the cause once, under the list of features
    groups: dict[str, list[Row]] = {}
    for r in talk:
        if r.status == "unknown" and len(r.reasons) == 1 and not r.action:
            groups.setdefault(r.reasons[0], []).append(r)
    grouped = {id(r) for rs in groups.values() if len(rs) > 1 for r in rs}
    done_groups: set[str] = set()
    if any(r.group for r in talk):  # blocked features under what fixes them, in the plan's order
        groups_seen = dict.fromkeys(r.group for r in talk if r.group)
        fixed = sorted((g for g in groups_seen if g.startswith("fixed by plan step")), key=_step_number)
        order = {g: i for i, g in enumerate([*fixed, *(g for g in groups_seen if g not in fixed)])}
        last = len(order) + 1
        talk.sort(key=lambda r: order.get(r.group, last) if r.status == "blocked" else last + 1)
    heading = None
    for r in talk:
        style = STYLE.get(r.status, "")
        if r.group and r.group != heading:
            heading = r.group
            out.append(paint(f"{r.group}:", "bold"))
        elif not r.group and heading is not None and r.status == "blocked":
            heading = None
        mark = paint(MARK.get(r.status, "?"), style)
        if id(r) in grouped:
            cause = r.reasons[0]
            if cause in done_groups:
                continue
            done_groups.add(cause)
            members = [x.id for x in groups[cause]]
            out += _paint_first(
                wrap_items(members, width, f"{MARK['unknown']} {r.status}: ", INDENT, ", "), paint, style
            )
            out += wrap(cause, width, INDENT)
            continue
        head = f"{mark} {r.id:<{idw}} {paint(f'{r.word:<{wordw}}', style)}  "
        visible = len(f"x {r.id:<{idw}} {r.word:<{wordw}}  ")
        body = list(r.reasons) if r.reasons else ([r.note] if r.note else [])
        first = (f"→ {r.action}. " if r.action else "") + (body[0] if body else "")
        lines = wrap(first.strip(), width, INDENT, " " * visible)
        out.append(head + lines[0][visible:] if lines else head.rstrip())
        out += lines[1:]
        for reason in body[1:]:
            out += wrap(reason, width, INDENT + "  ", INDENT + "· ")
    quiet = [r for r in rows if r not in talk]
    by_status: dict[str, list[str]] = {}
    for r in quiet:
        key = r.status if r.status != "not-applicable" or not r.note else f"{r.status} ({r.note})"
        by_status.setdefault(key, []).append(r.id)
    for key, members in by_status.items():
        status = key.split(" ", 1)[0]
        first = f"{MARK.get(status, '?')} {key}: "
        out += _paint_first(wrap_items(members, width, first, INDENT, ", "), paint, STYLE.get(status, ""))
    return out


def _step_number(group: str) -> int:
    m = re.search(r"step (\d+)", group)
    return int(m.group(1)) if m else 0


def _paint_first(lines: list[str], paint: Paint, style: str) -> list[str]:
    """Colour the mark of a grouped line (its first character)."""
    if not lines or not paint.color:
        return lines
    return [paint(lines[0][:1], style) + lines[0][1:], *lines[1:]]


# ---- the plan -----------------------------------------------------------------------------------------


def plan_lines(report: Report, width: int = NO_WRAP, shown: dict[str, set[str]] | None = None) -> list[str]:
    """The plan as text. `shown`: feature -> the reason messages printed above it (the audit); a feature
    that stays blocked for a reason already printed is named, not explained twice."""
    plan = report.get("plan")
    if not isinstance(plan, dict):
        return []
    lines: list[str] = []
    steps = plan.get("steps") or []
    if plan.get("note"):
        lines += wrap(str(plan["note"]), width, "        ", "  note: ")
    if plan.get("error"):
        lines += wrap(str(plan["error"]), width, "           ", "  no plan: ")
    if not steps and not plan.get("error"):
        if plan.get("elsewhere"):
            text = f"nothing planned for this environment: audit the serving one ({plan['elsewhere'][0]})"
        elif plan.get("note") and "would block what is ok now" in str(plan.get("note")):
            text = "nothing to upgrade without losing a feature that is ok now (see the note)"
        else:
            text = "nothing to upgrade: the stack is the newest the manifests know for these GPUs"
        lines += wrap(text, width, "    ", "  ")
    for i, s in enumerate(steps, 1):
        lines += wrap(
            f"{i}. {s.get('component')}: {s.get('from') or 'not installed'} → {s.get('to')}", width, "     ", "  "
        )
        if s.get("reason"):
            lines += wrap(str(s["reason"]), width, "          ", "     why: ")
        for w in s.get("warnings") or []:
            lines += wrap(str(w), width, "         ", "     ! ")  # never 7 spaces: that indent is a command's
        for cmd in s.get("commands") or []:
            lines += shell_lines(str(cmd), width, "       ")  # no prompt: the line pastes as it is
        for alt in s.get("alternatives") or []:
            lines += wrap(f"{alt.get('note')}:", width, "         ", "     ")
            for cmd in alt.get("commands") or []:
                lines += shell_lines(str(cmd), width, "       ")
        if s.get("unblocks"):
            lines += wrap_items([str(u) for u in s["unblocks"]], width, "     unblocks: ", "               ", ", ")
    still = plan.get("still_blocked") or []
    same = [
        b
        for b in still
        if shown and not b.get("workaround") and str(b.get("why")) in shown.get(str(b.get("feature")), set())
    ]
    if still:
        lines.append("  still blocked after the plan:")
    if same:
        names = [str(b.get("feature")) for b in same]
        lines += wrap_items(names, width, "    for the reason given above: ", "      ", ", ")
    for b in still:
        if b in same:
            continue
        lines += wrap(f"{b.get('feature')}: {b.get('why')}", width, "      ", "    ")
        wa = b.get("workaround")
        if isinstance(wa, dict):
            lines += wrap(
                f"workaround (unsupported upstream): {wa.get('text', '')}".rstrip(), width, "        ", "      "
            )
            patch = wa.get("patch")
            if isinstance(patch, dict):
                lines += wrap(
                    f"patch: {patch.get('file')}: add key {patch.get('add_key')} to {patch.get('symbol')}",
                    width,
                    "        ",
                    "      ",
                )
    lines += failing_check_lines(plan, width)
    return lines


def failing_check_lines(plan: Mapping[str, Any], width: int = NO_WRAP, indent: str = "  ") -> list[str]:
    """The plan's `still_failing_checks` as text: each check that still fails after the plan, its failing rules
    (observed against required) and its own fix; none of its lines is a command line of the plan (plan_commands)."""
    failing = [c for c in plan.get("still_failing_checks") or [] if isinstance(c, dict)]
    if not failing:
        return []
    head = "still failing after the plan (stack checks: the plan alone does not make the box launch):"
    lines = wrap(head, width, indent + "  ", indent)
    for c in failing:
        lines += wrap(f"{c.get('check')} ({c.get('effect')}): {c.get('title')}", width, indent + "    ", indent + "  ")
        for r in c.get("failures") or []:
            seen = ""
            if isinstance(r, dict) and "observed" in r and "required" in r:
                seen = f" (observed {r.get('observed')}, required {r.get('required')})"
            text = f"{r.get('rule')}: {r.get('message')}{seen}" if isinstance(r, dict) else str(r)
            lines += wrap(text, width, indent + "      ", indent + "    ")
        fix = c.get("fix")
        if isinstance(fix, dict) and fix.get("text"):
            lines += wrap(f"fix: {fix.get('text')}", width, indent + "      ", indent + "    ")
            for cmd in fix.get("commands") or []:
                lines += wrap(f"run: {cmd}", width, indent + "      ", indent + "    ")
    return lines


def plan_commands(lines: list[str]) -> list[str]:
    """The commands of rendered plan lines, continuations joined (for tests: each is one line of shell). Only the
    lines after the plan's heading count: above it a wrapped `box:` or `stack:` line continues at the same indent."""
    from stackcheck.render.layout import join_shell_lines

    out: list[str] = []
    pending: list[str] = []
    in_plan = not any(line.startswith("plan:") for line in lines)
    for line in lines:
        in_plan = in_plan or line.startswith("plan:")
        if not in_plan:
            continue
        if pending or (line.startswith(" " * 7) and not line.startswith(" " * 8)):
            pending.append(line)
            if not line.endswith(" \\"):
                out.append(join_shell_lines(pending))
                pending = []
    return out


# ---- sources, probes, facts ---------------------------------------------------------------------------


def sources_lines(report: Report, width: int) -> list[str]:
    """Every source the text cites (the reasons shown, the plan): id, title, address (`--sources`)."""
    cited = {
        "features": [{"reasons": _failing(f)} for f in report.get("features") or []],
        "checks": [{"reasons": _failing(c)} for c in report.get("checks") or []],
        "plan": report.get("plan"),
    }
    found = collect(cited)
    if not found:
        return ["sources: none cited"]
    out = [f"sources: {len(found)}"]
    for ref in found.values():
        text = f"{ref['title']}" + (f" <{ref['url']}>" if ref.get("url") else "")
        out += wrap(text, width, " " * 6, f"  {ref['id']}: ") if width < NO_WRAP else [f"  {ref['id']}: {text}"]
    return out


def probe_line(report: Report) -> str:
    parts = []
    for p in report.get("probes") or []:
        s = f"{p.get('name')} {p.get('status')}"
        if p.get("status") != "ok" and p.get("reason"):
            s += f" ({p['reason']})"
        parts.append(s)
    return "probes: " + ", ".join(parts) if parts else ""


def facts_lines(report: Report, width: int = NO_WRAP) -> list[str]:
    facts = report.get("facts") or {}
    out = ["", "gpus"]
    for g in facts.get("gpus") or []:
        mem = g.get("memory_bytes")
        out += wrap(
            f"{g.get('index')}: {g.get('name')} cc {g.get('compute_capability')} "
            f"{(mem or 0) / 2**30:.0f} GiB {g.get('pci_bus_id') or ''}"
            + (f" error: {g['error']}" if g.get("error") else ""),
            width,
            "      ",
            "  ",
        )
    topo = facts.get("topology") or {}
    for pair in topo.get("pairs") or []:
        out.append(f"  GPU{pair.get('a')}↔GPU{pair.get('b')}: {pair.get('link')} p2p {pair.get('p2p_read')}")
    out.append("cuda toolkits")
    for t in facts.get("cuda_toolkits") or []:
        flags = [k for k in ("active_for_build", "active_for_torch") if t.get(k)]
        out += wrap(
            f"{t.get('version')} {t.get('path') or ''} ({t.get('source')})"
            + (f" [{', '.join(flags)}]" if flags else ""),
            width,
            "      ",
            "  ",
        )
    out.append("packages")
    for name, p in sorted((facts.get("packages") or {}).items()):
        if p.get("installed"):
            extra = f" cuda {p['cuda']}" if p.get("cuda") else ""
            out += wrap(
                f"{name} {p.get('version')}{extra} at {p.get('location')}"
                + (" (editable)" if p.get("editable") else "")
                + (f" ({p['copies']} copies)" if (p.get("copies") or 1) > 1 else ""),
                width,
                "      ",
                "  ",
            )
    system = facts.get("system") or {}
    out.append("system")
    out += wrap_items(
        [
            str(system.get("os")),
            f"kernel {system.get('kernel')}",
            f"glibc {system.get('glibc')}",
            f"{system.get('python_implementation')} {system.get('python')}",
            str(system.get("machine")),
            *([f"container {system['container']}"] if system.get("container") else []),
        ],
        width,
        "  ",
        "  ",
    )
    return out


# ---- the whole report ---------------------------------------------------------------------------------


def implied_lines(report: Report, width: int) -> list[str]:
    """The implied facts a verdict used (stackcheck/facts/implied.py: versions a facts file lacks that a stated release
    pins), said once above the verdicts; nothing when no verdict turned on them."""
    used = [
        t
        for verdicts in (report.get("features") or [], report.get("checks") or [])
        for v in verdicts  # the verdicts the engine built: dicts (no re-check)
        for t in v.get("implied") or []
    ]
    if not used:
        return []
    texts = list(dict.fromkeys(str(t).removeprefix("implied: ") for t in used))
    return wrap("implied, not stated (they can fail a check, never pass one): " + "; ".join(texts), width, "  ")


def render_plain(report: Report, width: int | None = None, *, color: bool = False, sources: bool = False) -> str:
    width = width or output_width()
    paint = Paint(color)
    out = box_lines(report, width)
    out += implied_lines(report, width)
    if "features" in report:
        out.append("")
        out += section_lines("features", feature_items(report), width, paint)
    if "checks" in report:
        out.append("")
        out += section_lines("stack checks", check_items(report), width, paint)
    if "plan" in report:
        out.append("")
        plan: Mapping[str, Any] = report.get("plan") or {}
        n = len(plan.get("steps") or []) if isinstance(plan, dict) else 0
        target = (plan.get("target") or {}) if isinstance(plan, dict) else {}
        to = f" to sglang {target['sglang']}" if isinstance(target, dict) and target.get("sglang") else ""
        out.append(paint("plan", "bold") + (f": {n} step{'s' if n != 1 else ''}{to}" if n else ""))
        shown = {str(f.get("id")): {str(r.get("message")) for r in _failing(f)} for f in report.get("features") or []}
        out += plan_lines(report, width, shown)
    if "features" not in report and "plan" not in report:
        out += facts_lines(report, width)
    if sources:
        out.append("")
        out += sources_lines(report, width)
    line = probe_line(report)
    if line:
        out.append("")
        out += [paint(x, "dim") for x in wrap(line, width, "  ")]
    return "\n".join(out) + "\n"
