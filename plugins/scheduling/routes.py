"""/v1/jobs/:job_id/scheduling and /schedule-setting: whether and when interviews are scheduled for
a job."""

from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from plugins.scheduling import services
from plugins.scheduling.schemas import (
    ScheduleSettingRecordSchema,
    ScheduleSettingSchema,
    SchedulingSchema,
    SchedulingToggleSchema,
)

blp = Blueprint(
    "scheduling", __name__, url_prefix="/v1/jobs", description="Interview scheduling per job"
)


@blp.route("/<job_id>/scheduling")
class Scheduling(MethodView):
    @blp.response(200, SchedulingSchema)
    def get(self, job_id):
        """Whether interview scheduling is enabled for the job"""
        schedule = services.get_schedule(current_tenant_id(), job_id)
        return {"job_id": schedule["job_id"], "scheduling": schedule["scheduling"]}

    @blp.arguments(SchedulingToggleSchema)
    @blp.response(200, SchedulingSchema)
    def patch(self, values, job_id):
        """Enable or disable interview scheduling (disabling cancels pending scheduled calls)"""
        return services.set_scheduling(current_tenant_id(), job_id, values["scheduling"])


@blp.route("/<job_id>/schedule-setting")
class ScheduleSetting(MethodView):
    @blp.response(200, ScheduleSettingRecordSchema)
    def get(self, job_id):
        """The job's schedule setting (the defaults until one is PUT)"""
        return services.get_schedule(current_tenant_id(), job_id)

    @blp.arguments(ScheduleSettingSchema)
    @blp.response(200, ScheduleSettingRecordSchema)
    def put(self, values, job_id):
        """Replace the schedule setting: window, attempts, retry interval, days, reminders"""
        return services.replace_setting(current_tenant_id(), job_id, values)
