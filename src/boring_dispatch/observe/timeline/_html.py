"""The timeline as one self-contained HTML page: an SVG bar per call, then the figures.

No script, no network, no external resource: inline CSS and inline SVG only.
Each row is one call, drawn on a common scale from the start of its decision:
decision, execution (with the dispatcher's part inside it, and the gateway's
inside that, placed by their start) and response creation. A stretch at or
above the slow threshold is outlined in red. Every text from the session is
escaped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Final

from boring_dispatch.observe.timeline._text import display

if TYPE_CHECKING:
    from boring_dispatch.observe.timeline._join import CallTiming
    from boring_dispatch.observe.timeline._load import Timeline

__all__ = ["render_html"]

_LEFT: Final = 230
_WIDTH: Final = 900
_ROW: Final = 34
_BAR: Final = 18
_TOP: Final = 40
_COLORS: Final = {
    "decision": "#8ab4f8",
    "execution": "#fbbc04",
    "dispatcher": "#e8710a",
    "gateway": "#a142f4",
    "response": "#34a853",
}
_STYLE: Final = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #202124; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.meta { color: #5f6368; margin: 0 0 16px; }
table { border-collapse: collapse; margin-top: 16px; }
th, td { border-bottom: 1px solid #dadce0; padding: 4px 10px; text-align: right; }
th:nth-child(-n+3), td:nth-child(-n+3) { text-align: left; }
td.slow { color: #c5221f; font-weight: 600; }
svg text { font: 12px system-ui, sans-serif; fill: #202124; }
.legend span { display: inline-block; margin-right: 16px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; }
"""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def render_html(timeline: Timeline, slow_ms: float) -> str:
    """The whole page (UTF-8 text)."""
    title = f"boring-dispatch timeline: {display(timeline.session_id or timeline.path)}"
    legend = "".join(
        f'<span><i style="background:{color}"></i>{name}</span>' for name, color in _COLORS.items()
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in timeline.notes)
    servers = ", ".join(map(display, timeline.servers)) or "no server of ours"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f'<p class="meta">{escape(timeline.host)} session, {len(timeline.calls)} call(s) of '
        f"{escape(servers)}, {timeline.joined} joined "
        f"to spans; slow: at or above {slow_ms:g} ms (outlined red)</p>"
        f'<div class="legend">{legend}</div>'
        f"{_svg(timeline.calls, slow_ms)}{_table(timeline.calls, slow_ms)}"
        f"{f'<ul>{notes}</ul>' if notes else ''}</body></html>\n"
    )


def _total(call: CallTiming) -> float:
    return sum(v for v in (call.decision_ms, call.execution_ms, call.response_ms) if v) or 0.0


def _svg(calls: tuple[CallTiming, ...], slow_ms: float) -> str:
    height = _TOP + _ROW * max(len(calls), 1) + 10
    scale = _WIDTH / max([_total(call) for call in calls] + [1.0])
    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" id="timeline" role="img" '
            f'width="{_LEFT + _WIDTH + 20}" height="{height}" '
            f'viewBox="0 0 {_LEFT + _WIDTH + 20} {height}">'
        ),
        f'<text x="{_LEFT}" y="20">0 ms</text>',
        f'<text x="{_LEFT + _WIDTH}" y="20" text-anchor="end">{_fmt(_WIDTH / scale)} ms</text>',
    ]
    for index, call in enumerate(calls):
        y = _TOP + index * _ROW
        label = f"{index + 1}. {display(call.tool)}"
        parts.append(f'<text x="8" y="{y + 13}">{escape(label[:32])}</text>')
        parts.extend(_bars(call, y, scale, slow_ms))
    if not calls:
        parts.append(f'<text x="8" y="{_TOP + 13}">no call of our server in this session</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rect(kind: str, box: tuple[float, float, float, float], tip: str, *, slow: bool) -> str:
    """One bar; ``box`` is ``(x, y, width, height)``."""
    x, y, width, height = box
    stroke = ' stroke="#c5221f" stroke-width="2"' if slow else ""
    return (
        f'<rect class="{kind}" x="{x:.2f}" y="{y:.2f}" width="{max(width, 1.0):.2f}" '
        f'height="{height}" fill="{_COLORS[kind]}"{stroke}><title>{escape(tip)}</title></rect>'
    )


def _bars(call: CallTiming, y: float, scale: float, slow_ms: float) -> list[str]:
    out: list[str] = []
    x = float(_LEFT)
    if call.decision_ms is not None:
        width = call.decision_ms * scale
        slow = call.decision_ms >= slow_ms
        out.append(
            _rect(
                "decision", (x, y, width, _BAR), f"decision {_fmt(call.decision_ms)} ms", slow=slow
            )
        )
        x += width
    if call.execution_ms is not None:
        width = call.execution_ms * scale
        slow = call.execution_ms >= slow_ms
        tip = (
            f"execution {_fmt(call.execution_ms)} ms "
            f"(outside the dispatcher {_fmt(call.outside_ms)} ms)"
        )
        out.append(_rect("execution", (x, y, width, _BAR), tip, slow=slow))
        if call.dispatcher_ms is not None:
            offset = min(max(call.dispatcher_offset_ms or 0.0, 0.0), call.execution_ms)
            inner_x = x + offset * scale
            inner_w = min(call.dispatcher_ms * scale, x + width - inner_x)
            tip = f"dispatcher {_fmt(call.dispatcher_ms)} ms (resolve {_fmt(call.resolve_ms)} ms)"
            out.append(_rect("dispatcher", (inner_x, y + 3, inner_w, _BAR - 6), tip, slow=False))
            if call.gateway_ms is not None:
                gateway_w = min(call.gateway_ms * scale, inner_w)
                gateway_x = inner_x + inner_w - gateway_w
                tip = f"gateway {_fmt(call.gateway_ms)} ms"
                out.append(
                    _rect("gateway", (gateway_x, y + 6, gateway_w, _BAR - 12), tip, slow=False)
                )
        x += width
    if call.response_ms is not None:
        width = call.response_ms * scale
        slow = call.response_ms >= slow_ms
        out.append(
            _rect(
                "response", (x, y, width, _BAR), f"response {_fmt(call.response_ms)} ms", slow=slow
            )
        )
    return out


def _table(calls: tuple[CallTiming, ...], slow_ms: float) -> str:
    heads = (
        "#",
        "called at (UTC)",
        "tool",
        "decision",
        "execution",
        "dispatcher",
        "gateway",
        "outside",
        "response",
    )
    rows = ["<table><thead><tr>", *(f"<th>{h}</th>" for h in heads), "</tr></thead><tbody>"]
    for index, call in enumerate(calls, start=1):
        when = datetime.fromtimestamp(call.called_at, UTC).strftime("%H:%M:%S.%f")[:-3]
        cells = [str(index), when, escape(display(call.tool))]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells))
        for value, marked in (
            (call.decision_ms, True),
            (call.execution_ms, True),
            (call.dispatcher_ms, False),
            (call.gateway_ms, False),
            (call.outside_ms, True),
            (call.response_ms, True),
        ):
            slow = marked and value is not None and value >= slow_ms
            cell = '<td class="slow">' if slow else "<td>"
            rows.append(f"{cell}{_fmt(value)}</td>")
        rows.append("</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)
