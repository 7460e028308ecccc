"""Kiln's compiler: tensor expressions and schedules, lowering, code generation and build.

It runs offline, on a workstation, and produces libraries the microruntime loads.
"""
