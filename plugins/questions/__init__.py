"""The questions family: /v1/jobs/:job_id/questions, generation, and
/v1/applications/with-questions."""

from app.plugins import Plugin
from plugins.questions.models import Question
from plugins.questions.routes import blp, with_questions_blp

PLUGIN = Plugin(
    name="questions",
    blueprints=(blp, with_questions_blp),
    models=(Question,),
    needs=("jobs", "applications"),
)
