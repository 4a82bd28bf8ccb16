"""``urbanverse.locks``: one writer per folder, the holder named, a killed holder never in the way."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tests.longjobs.helpers import held_elsewhere
from urbanverse.errors import InputError
from urbanverse.gen.pipeline import ERROR_FILE, clear_for_error
from urbanverse.locks import LOCK_FILE, FolderLocked, folder_lock, read_holder


def test_a_second_writer_is_refused_with_the_holders_pid_and_command(tmp_path):
    with held_elsewhere(tmp_path / "out", "gen") as holder:
        with pytest.raises(FolderLocked) as refused:
            with folder_lock(tmp_path / "out", "gen"):
                pytest.fail("the lock was taken twice")
    message = str(refused.value)
    assert isinstance(refused.value, InputError)  # the command line's exit 2
    assert "\n" not in message and message.startswith(f"{tmp_path / 'out'}: another gen is writing here")
    assert f"pid {holder.pid} (-c {tmp_path / 'out'} gen)" in message  # its pid and command line


def test_the_lock_of_a_killed_holder_is_taken_over_and_removed_on_release(tmp_path):
    with held_elsewhere(tmp_path, "gen") as holder:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert (tmp_path / LOCK_FILE).is_file()  # left behind, as a SIGKILL leaves it
        with folder_lock(tmp_path, "gen"):
            assert read_holder(tmp_path)["pid"] != holder.pid
    assert not (tmp_path / LOCK_FILE).exists()


def test_the_lock_is_reentrant_in_one_process_and_released_by_the_outermost_holder(tmp_path):
    with folder_lock(tmp_path, "gen"):
        with folder_lock(tmp_path, "gen"):
            pass
        assert (tmp_path / LOCK_FILE).is_file()
    assert not (tmp_path / LOCK_FILE).exists()
    with folder_lock(tmp_path, "gen"):  # free again
        pass


def test_a_bad_inputs_clean_up_keeps_the_lock_of_the_run_that_holds_it(tmp_path):
    with folder_lock(tmp_path, "gen"):
        (tmp_path / "work").mkdir()
        clear_for_error(tmp_path, "bad input")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ERROR_FILE, LOCK_FILE])
    assert [p.name for p in tmp_path.iterdir()] == [ERROR_FILE]


def test_a_waiting_writer_takes_the_lock_when_the_holder_lets_go(tmp_path):
    with held_elsewhere(tmp_path, "asset library writer") as holder:
        threading.Timer(0.5, holder.kill).start()
        start = time.monotonic()
        with folder_lock(tmp_path, "asset library writer", wait_s=30):
            waited = time.monotonic() - start
            assert read_holder(tmp_path)["pid"] == os.getpid()
    assert waited > 0.3  # it waited for the holder instead of refusing


def test_a_waiting_writer_gives_up_after_its_wait(tmp_path):
    with held_elsewhere(tmp_path, "asset library writer"), pytest.raises(FolderLocked, match="another"):
        with folder_lock(tmp_path, "asset library writer", wait_s=0.3):
            pass
