"""Isaac Lab configuration of ``Isaac-UrbanVerse-PointNav-Wheeled-v0`` (imports isaaclab: Isaac only).

Scene: the UrbanVerse scene USD as a USD terrain (``/World/ground``), a Jetbot per environment
(differential drive, wheel-velocity actions), a contact sensor on its bodies and a forward RGB
camera (135 x 240, UrbanVerse's policy input). All environments share the one scene
(``env_spacing = 0``; Isaac Lab filters collisions between environments) and start on free
walkable points. Observations: goal vector in the yaw frame (2), base linear and angular
velocity (6), last action (2), camera RGB (flattened). Values come from ``spec.PointNavSpec``.
"""

from __future__ import annotations

import isaaclab.envs.mdp as base_mdp
import isaaclab.sim as sim_utils
from isaaclab.actuators import ImplicitActuatorCfg
from isaaclab.assets import ArticulationCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg, TiledCameraCfg
from isaaclab.terrains import TerrainImporterCfg
from isaaclab.utils import configclass
from isaaclab.utils.assets import ISAAC_NUCLEUS_DIR

from urbanverse.sim.isaaclab import mdp
from urbanverse.sim.isaaclab.spec import PointNavSpec

#: Wheel speed (rad/s) of a unit action: about 1 m/s forward with the Jetbot's 3 cm wheels.
WHEEL_SPEED_SCALE = 30.0

JETBOT_CFG = ArticulationCfg(
    prim_path="{ENV_REGEX_NS}/Robot",
    spawn=sim_utils.UsdFileCfg(
        usd_path=f"{ISAAC_NUCLEUS_DIR}/Robots/NVIDIA/Jetbot/jetbot.usd", activate_contact_sensors=True
    ),
    init_state=ArticulationCfg.InitialStateCfg(pos=(0.0, 0.0, 0.05)),
    actuators={
        "wheels": ImplicitActuatorCfg(joint_names_expr=[".*_wheel_joint"], stiffness=None, damping=None)
    },
)


@configclass
class UrbanSceneCfg(InteractiveSceneCfg):
    """The UrbanVerse scene as terrain, the robot, its contact sensor and camera."""

    terrain = TerrainImporterCfg(prim_path="/World/ground", terrain_type="usd", usd_path="")
    robot: ArticulationCfg = JETBOT_CFG
    contact_forces = ContactSensorCfg(prim_path="{ENV_REGEX_NS}/Robot/.*", history_length=1)
    camera = TiledCameraCfg(
        prim_path="{ENV_REGEX_NS}/Robot/chassis/front_camera",
        offset=TiledCameraCfg.OffsetCfg(pos=(0.08, 0.0, 0.12), rot=(0.5, -0.5, 0.5, -0.5), convention="ros"),
        data_types=["rgb"],
        spawn=sim_utils.PinholeCameraCfg(focal_length=12.0, clipping_range=(0.05, 60.0)),
        width=240,
        height=135,
    )


@configclass
class ActionsCfg:
    wheels = base_mdp.JointVelocityActionCfg(
        asset_name="robot", joint_names=["left_wheel_joint", "right_wheel_joint"], scale=WHEEL_SPEED_SCALE
    )


@configclass
class ObservationsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        goal = ObsTerm(func=base_mdp.generated_commands, params={"command_name": "goal"})
        base_lin_vel = ObsTerm(func=base_mdp.base_lin_vel)
        base_ang_vel = ObsTerm(func=base_mdp.base_ang_vel)
        last_action = ObsTerm(func=base_mdp.last_action)
        camera = ObsTerm(func=mdp.camera_rgb_flat, params={"sensor_cfg": SceneEntityCfg("camera")})

        def __post_init__(self) -> None:
            self.concatenate_terms = True

    policy: PolicyCfg = PolicyCfg()


@configclass
class UrbanVersePointNavWheeledEnvCfg(ManagerBasedRLEnvCfg):
    """Point-goal navigation of a Jetbot in an UrbanVerse scene (``$URBANVERSE_ISAAC_SCENE``)."""

    scene: UrbanSceneCfg = UrbanSceneCfg(num_envs=64, env_spacing=0.0)
    actions: ActionsCfg = ActionsCfg()
    observations: ObservationsCfg = ObservationsCfg()

    def __post_init__(self) -> None:
        spec = PointNavSpec()
        points = spec.points().tolist()
        chassis = SceneEntityCfg("contact_forces", body_names="chassis")
        goal = {"command_name": "goal"}
        arrive = {**goal, "radius": spec.task.success_radius}
        hit = {"sensor_cfg": chassis, "threshold": spec.collision_force}
        self.scene.num_envs = spec.num_envs
        self.scene.terrain.usd_path = str(spec.usd_path())
        self.sim.dt = spec.physics_dt
        self.decimation = spec.decimation
        self.sim.render_interval = spec.decimation
        self.episode_length_s = spec.episode_length_s
        self.scene.contact_forces.update_period = spec.physics_dt
        self.commands = _Commands(
            goal=mdp.PointGoalCommandCfg(
                asset_name="robot",
                points=points,
                min_distance=spec.task.min_goal_distance,
                max_distance=spec.task.max_goal_distance,
                resampling_time_range=(1e9, 1e9),
            )
        )
        self.events = _Events(
            reset_robot=EventTerm(
                func=mdp.reset_at_points,
                mode="reset",
                params={"points": points, "asset_cfg": SceneEntityCfg("robot")},
            )
        )
        c = spec.rewards
        self.rewards = _Rewards(
            arrival=RewTerm(func=mdp.arrival, weight=spec.isaac_weight("arrival"), params=arrive),
            collision=RewTerm(func=mdp.collision, weight=spec.isaac_weight("collision"), params=hit),
            position_coarse=RewTerm(
                func=mdp.position_tracking,
                weight=spec.isaac_weight("position_coarse"),
                params={**goal, "std": c.coarse_std},
            ),
            position_fine=RewTerm(
                func=mdp.position_tracking,
                weight=spec.isaac_weight("position_fine"),
                params={**goal, "std": c.fine_std},
            ),
            velocity=RewTerm(
                func=mdp.velocity_to_goal,
                weight=spec.isaac_weight("velocity"),
                params={**goal, "asset_cfg": SceneEntityCfg("robot")},
            ),
        )
        self.terminations = _Terminations(
            time_out=DoneTerm(func=base_mdp.time_out, time_out=True),
            success=DoneTerm(func=mdp.goal_reached, params=arrive),
            collision=DoneTerm(func=mdp.collided, params=hit),
        )
        if not spec.task.terminate_on_collision:
            self.terminations.collision = None


@configclass
class _Commands:
    goal: mdp.PointGoalCommandCfg = None


@configclass
class _Events:
    reset_robot: EventTerm = None


@configclass
class _Rewards:
    arrival: RewTerm = None
    collision: RewTerm = None
    position_coarse: RewTerm = None
    position_fine: RewTerm = None
    velocity: RewTerm = None


@configclass
class _Terminations:
    time_out: DoneTerm = None
    success: DoneTerm = None
    collision: DoneTerm = None
