#!/usr/bin/env python3
"""Writes the Rive page's animation, a Rive runtime file (.riv), from nothing.

No .riv ships in the Rive packages on npm, so the conformance suite makes its own: one
640x360 artboard holding one rectangle (160x120, a solid fill) whose shape moves from
x = 0 to x = 480 over 120 frames at 60 fps (2 s, linear keyframes), looping.

Usage: make_riv.py OUT.riv   (python3, standard library only)

The format (rive-runtime: include/rive/runtime_header.hpp, src/file.cpp, dev/defs/*.json):

  header   "RIVE", major version (varuint, 7 for the 2.x web runtimes), minor version
           (varuint), file id (varuint), then a table of contents: the property keys the
           file uses (varuints, ended by 0), then their field types, 2 bits each, four
           to a little-endian uint32 (in its low byte), so a runtime can skip properties
           it does not know.
  objects  until the end of the file: type key (varuint), then (property key (varuint),
           value)* and a 0. Values by field type: uint/id varuint, double float32 LE,
           color uint32 LE (ARGB), string varuint length + UTF-8, bool one byte.

Objects are imported in order: a Backboard, then each artboard followed by its components
(a component's parentId is its parent's index among the artboard's objects, the artboard
being 0), then the artboard's animations, each followed by keyed objects (objectId: the
index of the animated component), their keyed properties and keyframes.
"""
import os
import struct
import sys

# Field types, as the table of contents encodes them.
UINT, STRING, DOUBLE, COLOR, BOOL = 0, 1, 2, 3, 4

# Property key -> field type, for the properties written below (dev/defs).
PROPERTIES = {
    4: STRING,    # Component.name
    5: UINT,      # Component.parentId
    7: DOUBLE,    # LayoutComponent.width (the artboard's)
    8: DOUBLE,    # LayoutComponent.height
    11: DOUBLE,   # Artboard.originX
    12: DOUBLE,   # Artboard.originY
    13: DOUBLE,   # Node.x
    14: DOUBLE,   # Node.y
    20: DOUBLE,   # ParametricPath.width
    21: DOUBLE,   # ParametricPath.height
    37: COLOR,    # SolidColor.colorValue
    51: UINT,     # KeyedObject.objectId
    53: UINT,     # KeyedProperty.propertyKey
    55: STRING,   # Animation.name
    56: UINT,     # LinearAnimation.fps
    57: UINT,     # LinearAnimation.duration (frames)
    59: UINT,     # LinearAnimation.loopValue (0 one-shot, 1 loop, 2 ping-pong)
    67: UINT,     # KeyFrame.frame
    68: UINT,     # InterpolatingKeyFrame.interpolationType (0 hold, 1 linear, 2 cubic)
    70: DOUBLE,   # KeyFrameDouble.value
}

# Type keys (dev/defs).
BACKBOARD, ARTBOARD, SHAPE, RECTANGLE, FILL, SOLID_COLOR = 23, 1, 3, 7, 20, 18
LINEAR_ANIMATION, KEYED_OBJECT, KEYED_PROPERTY, KEYFRAME_DOUBLE = 31, 25, 26, 30
NODE_X = 13

MAJOR, MINOR = 7, 0


def varuint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def value(key, v):
    kind = PROPERTIES[key]
    if kind == UINT:
        return varuint(v)
    if kind == DOUBLE:
        return struct.pack("<f", v)
    if kind == COLOR:
        return struct.pack("<I", v)
    if kind == STRING:
        data = v.encode("utf-8")
        return varuint(len(data)) + data
    if kind == BOOL:
        return bytes([1 if v else 0])
    raise ValueError(key)


def obj(type_key, **props):
    """One object: props are given as p<key>=value."""
    out = bytearray(varuint(type_key))
    for name, v in props.items():
        key = int(name[1:])
        out += varuint(key) + value(key, v)
    out += varuint(0)
    return bytes(out)


def header():
    out = bytearray(b"RIVE")
    out += varuint(MAJOR) + varuint(MINOR) + varuint(0)
    keys = sorted(PROPERTIES)
    for key in keys:
        out += varuint(key)
    out += varuint(0)
    for i in range(0, len(keys), 4):
        bits = 0
        for j, key in enumerate(keys[i:i + 4]):
            bits |= PROPERTIES[key] << (2 * j)
        out += struct.pack("<I", bits)
    return bytes(out)


def riv():
    # Bool has field id 4, which does not fit 2 bits; none is written, so none is listed.
    assert BOOL not in PROPERTIES.values()
    objects = [
        obj(BACKBOARD),
        # Artboard objects: 0 artboard, 1 shape, 2 rectangle, 3 fill, 4 solid colour.
        obj(ARTBOARD, p4="Artboard", p7=640.0, p8=360.0, p11=0.0, p12=0.0),
        # The shape's x is the rectangle's left edge: the rectangle (origin at its centre,
        # the default 0.5, 0.5) sits at half its size inside the shape.
        obj(SHAPE, p4="Box", p5=0, p13=0.0, p14=220.0),
        obj(RECTANGLE, p4="Rect", p5=1, p13=80.0, p14=60.0, p20=160.0, p21=120.0),
        obj(FILL, p5=1),
        obj(SOLID_COLOR, p5=3, p37=0xFFE63946),
        obj(LINEAR_ANIMATION, p55="move", p56=60, p57=120, p59=1),
        obj(KEYED_OBJECT, p51=1),
        obj(KEYED_PROPERTY, p53=NODE_X),
        obj(KEYFRAME_DOUBLE, p67=0, p68=1, p70=0.0),
        obj(KEYFRAME_DOUBLE, p67=120, p68=1, p70=480.0),
    ]
    return header() + b"".join(objects)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_riv.py OUT.riv")
    out = sys.argv[1]
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(riv())
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
