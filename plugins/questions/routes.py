"""/v1/jobs/:job_id/questions (list, create, update, delete, generate) and POST
/v1/applications/with-questions (docs/integrating.md, Screening questions and Applications)."""

from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from app.files.bodies import json_or_multipart
from plugins.questions import services
from plugins.questions.schemas import (
    ApplicationWithQuestionsCreateSchema,
    ApplicationWithQuestionsSchema,
    QuestionBodySchema,
    QuestionListArgsSchema,
    QuestionListSchema,
    QuestionLocatorSchema,
    QuestionSchema,
    QuestionUpdateSchema,
)

blp = Blueprint(
    "questions",
    __name__,
    url_prefix="/v1/jobs/<job_id>/questions",
    description="Screening questions of a job and of its applications",
)


@blp.route("")
class Questions(MethodView):
    @blp.arguments(QuestionListArgsSchema, location="query")
    @blp.response(200, QuestionListSchema)
    def get(self, args, job_id):
        """List the job's questions (and, with application_id, that application's), by position"""
        return services.list_questions(current_tenant_id(), job_id, **args)

    @blp.arguments(QuestionBodySchema)
    @blp.response(201, QuestionSchema)
    @blp.errors(409)
    def post(self, values, job_id):
        """Add a question to the job, or to one of its applications"""
        return services.create_question(current_tenant_id(), job_id, values)


@blp.route("/generate")
class GeneratedQuestions(MethodView):
    @blp.response(
        201,
        QuestionListSchema,
        description="The questions created (none when the job already has them all)",
    )
    @blp.doc(operationId="generate_job_questions")
    def post(self, job_id):
        """Generate 5-10 screening questions from the job's description and fields, skipping ones the job already has"""  # noqa: E501
        return {"data": services.generate_questions(current_tenant_id(), job_id)}


@blp.route("/<question_id>")
class QuestionItem(MethodView):
    @blp.response(200, QuestionSchema)
    def get(self, job_id, question_id):
        """Read a question"""
        return services.get_question(current_tenant_id(), job_id, question_id)

    @blp.arguments(QuestionLocatorSchema, location="query")
    @blp.arguments(QuestionUpdateSchema)
    @blp.response(200, QuestionSchema)
    @blp.errors(409)
    def patch(self, locator, values, job_id, question_id):
        """Update a question: the query's source_id (required) and application_id must be the question's current ones"""  # noqa: E501
        return services.update_question(current_tenant_id(), job_id, question_id, locator, values)

    @blp.response(204)
    def delete(self, job_id, question_id):
        """Delete a question"""
        services.delete_question(current_tenant_id(), job_id, question_id)


with_questions_blp = Blueprint(
    "applications-with-questions",
    __name__,
    url_prefix="/v1/applications",
    description="Applications created together with their screening questions",
)


@with_questions_blp.route("/with-questions")
class ApplicationsWithQuestions(MethodView):
    @with_questions_blp.response(201, ApplicationWithQuestionsSchema)
    @with_questions_blp.errors(409)
    @json_or_multipart(
        with_questions_blp,
        ApplicationWithQuestionsCreateSchema,
        description="As POST /v1/applications, plus `questions` (in multipart, a JSON array as "
        "text)",
    )
    @with_questions_blp.doc(operationId="create_application_with_questions")
    def post(self, values):
        """Create an application together with its screening questions (all or nothing)"""
        return services.create_application_with_questions(current_tenant_id(), values)
