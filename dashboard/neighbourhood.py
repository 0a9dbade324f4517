"""The picture of an entity's neighbourhood: the entity in the middle, the entities its memories
also mention around it, each joined to it by a line as thick as the memories they share.

A plain deterministic radial layout (the neighbours in the order the selector ranks them, most
shared first, evenly around one or two rings), computed here and drawn by the template as SVG:
readable without JavaScript, each node a link to its entity's page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WIDTH = 760
HEIGHT = 440
CENTRE = (WIDTH / 2, HEIGHT / 2)
INNER_RING = 150
OUTER_RING = 210
INNER_MAX = 12  # more neighbours than this: the rest go on the outer ring
LABEL_CHARS = 22


@dataclass(frozen=True)
class Node:
    public_id: str
    label: str
    name: str
    kind: str
    shared: int
    x: float
    y: float
    radius: float
    stroke: float  # the width of the line to the centre
    anchor: str  # text-anchor of the label: start on the right half, end on the left
    label_x: float  # where the label starts (or ends), beside the circle


@dataclass(frozen=True)
class Picture:
    width: int
    height: int
    centre: Node
    nodes: list[Node]


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def neighbourhood(entity, neighbours) -> Picture:
    """`neighbours`: the selector's `Neighbour`s (entity, shared_memories), most shared first."""
    most = max((n.shared_memories for n in neighbours), default=1)
    nodes = []
    for index, neighbour in enumerate(neighbours):
        inner = index < INNER_MAX
        inner_count = min(len(neighbours), INNER_MAX)
        if inner:
            steps = index
        else:
            # The outer ring's nodes fall between the inner ones (half an inner step off), spread
            # evenly, so no outer node sits on an inner node's line.
            outer_count = len(neighbours) - INNER_MAX
            steps = (index - INNER_MAX) * inner_count / outer_count + 0.5
        angle = 2 * math.pi * steps / inner_count - math.pi / 2
        ring = INNER_RING if inner else OUTER_RING
        # Wider than tall, as labels run sideways; the outer ring less so, to keep its labels in.
        stretch = 1.3 if inner else 1.12
        weight = neighbour.shared_memories / most
        x = CENTRE[0] + ring * math.cos(angle) * stretch
        y = CENTRE[1] + ring * math.sin(angle) * 0.95
        radius = round(6 + 10 * weight, 1)
        right = math.cos(angle) >= -1e-9
        nodes.append(
            Node(
                public_id=neighbour.entity.public_id,
                label=_label(neighbour.entity.name),
                name=neighbour.entity.name,
                kind=neighbour.entity.kind,
                shared=neighbour.shared_memories,
                x=round(x, 1),
                y=round(y, 1),
                radius=radius,
                stroke=round(1 + 5 * weight, 1),
                anchor="start" if right else "end",
                label_x=round(x + (radius + 4 if right else -radius - 4), 1),
            )
        )
    centre = Node(
        public_id=entity.public_id,
        label=_label(entity.name),
        name=entity.name,
        kind=entity.kind,
        shared=0,
        x=CENTRE[0],
        y=CENTRE[1],
        radius=22,
        stroke=0,
        anchor="middle",
        label_x=CENTRE[0],
    )
    return Picture(width=WIDTH, height=HEIGHT, centre=centre, nodes=nodes)
