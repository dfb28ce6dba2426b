"""Scheduling operations: read and toggle a job's scheduling, read and replace its schedule
setting."""

from __future__ import annotations

from flask import current_app

from app.data.db import database
from app.data.records import first_row, row_for_update
from plugins.jobs.services import get_job
from plugins.scheduling.models import DEFAULT_SETTING, JobSchedule


def add_toggle_listener(app, listener) -> None:
    """listener(tenant_id, job_id, enabled) runs after a job's scheduling changes (calls cancels
    pending attempts)."""
    app.extensions.setdefault("hirekit_scheduling_listeners", []).append(listener)


def _schedule_row(job) -> JobSchedule | None:
    return JobSchedule.get_or_none(JobSchedule.job == job.id)


def get_schedule(tenant_id: str, job_id) -> dict:
    """The job's scheduling flag and setting; the defaults (scheduling off) until anything was
    set."""
    return schedule_of_owned_job(get_job(tenant_id, job_id).id)


def schedule_of_owned_job(job_id) -> dict:
    """get_schedule for a job id read from the tenant's own rows (a call's or an application's): one
    statement, without reading the job again to check whose it is (records.first_row: every new
    application's listener reads it, and peewee's query builder took a sixth of the create)."""
    row = first_row(JobSchedule, {JobSchedule.job: job_id})
    setting = (
        row.setting()
        if row
        else {**DEFAULT_SETTING, "days_of_week": list(DEFAULT_SETTING["days_of_week"])}
    )
    return {"job_id": job_id, "scheduling": bool(row and row.scheduling), **setting}


def set_scheduling(tenant_id: str, job_id, enabled: bool) -> dict:
    job = get_job(tenant_id, job_id)
    with database.atomic():
        row = row_for_update(JobSchedule, JobSchedule.job, job.id)
        if row.scheduling != enabled:
            row.scheduling = enabled
            row.save()
            for listener in current_app.extensions.get("hirekit_scheduling_listeners", []):
                listener(tenant_id, job.id, enabled)
    return {"job_id": job.id, "scheduling": enabled}


def replace_setting(tenant_id: str, job_id, values: dict) -> dict:
    """PUT: the sent fields, defaults for the rest; the scheduling flag is untouched."""
    job = get_job(tenant_id, job_id)
    setting = {**DEFAULT_SETTING, "days_of_week": list(DEFAULT_SETTING["days_of_week"]), **values}
    with database.atomic():
        row = row_for_update(JobSchedule, JobSchedule.job, job.id)
        for name, value in setting.items():
            setattr(row, name, value)
        row.save()
    return get_schedule(tenant_id, job.id)
