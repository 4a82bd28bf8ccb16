"""Standalone Isaac Sim application: open a scene USD, optionally add a robot, and run.

Run by ``urbanverse isaac SCENE_DIR`` (see ``launch``), or directly with Isaac Sim's Python::

    python -m urbanverse.sim.isaaclab.app scenes/example/scene.usda --robot wheeled --spawn 0,5,0.15

In the GUI the simulation plays until the window is closed; ``--headless`` steps
``--frames`` frames and exits (a smoke test that the stage loads and simulates).
"""

from __future__ import annotations

import argparse

#: Robots from Isaac Sim's asset root (relative paths) and the height (m) their base starts above the ground.
ROBOT_ASSETS = {
    "wheeled": ("/Isaac/Robots/NVIDIA/Jetbot/jetbot.usd", 0.05),
    "legged": ("/Isaac/Robots/ANYbotics/anymal_c/anymal_c.usd", 0.65),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("usd", help="Scene USD (scene.usda or scene.usdc).")
    parser.add_argument("--robot", choices=sorted(ROBOT_ASSETS), default=None)
    parser.add_argument("--spawn", default="0,0,0", help="x,y,z of the robot's spawn point (m).")
    parser.add_argument("--headless", action="store_true")
    parser.add_argument("--frames", type=int, default=120, help="Frames to simulate when headless.")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from isaacsim import SimulationApp

    app = SimulationApp({"headless": args.headless})
    try:
        import omni.usd
        from isaacsim.core.api import World
        from isaacsim.core.utils.stage import add_reference_to_stage, is_stage_loading
        from isaacsim.storage.native import get_assets_root_path

        if not omni.usd.get_context().open_stage(args.usd):
            print(f"error: Isaac Sim could not open {args.usd}")
            return 1
        while is_stage_loading():
            app.update()
        world = World(stage_units_in_meters=1.0)
        if args.robot is not None:
            root = get_assets_root_path()
            if root is None:
                print("error: Isaac Sim's asset root (Nucleus or a local mirror) is not reachable")
                return 1
            rel_path, base_height = ROBOT_ASSETS[args.robot]
            prim = add_reference_to_stage(usd_path=root + rel_path, prim_path="/World/Robot")
            x, y, z = (float(v) for v in args.spawn.split(","))
            from pxr import Gf, UsdGeom

            UsdGeom.XformCommonAPI(prim).SetTranslate(Gf.Vec3d(x, y, z + base_height))
        world.reset()
        frame = 0
        while app.is_running() and (not args.headless or frame < args.frames):
            world.step(render=True)
            frame += 1
        print(f"simulated {frame} frames of {args.usd}")
        return 0
    finally:
        app.close()


if __name__ == "__main__":
    raise SystemExit(main())
