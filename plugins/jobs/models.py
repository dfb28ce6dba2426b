"""The Job table: an ATS job posting with a per-tenant sequential number for the public board."""

import peewee as pw

from app.data.records import RecruiterColumns, TenantRecord, tenant_indexes


class Job(TenantRecord, RecruiterColumns):
    label = "job"

    number = pw.IntegerField()
    source_id = pw.CharField(max_length=255)
    title = pw.CharField(max_length=500)
    description = pw.TextField(null=True)
    client_name = pw.CharField(max_length=255, null=True)
    industry = pw.CharField(max_length=255, null=True)
    job_code = pw.CharField(max_length=255, null=True)
    address = pw.CharField(max_length=500, null=True)
    workplace_type = pw.CharField(max_length=100, null=True)
    city = pw.CharField(max_length=255, null=True)
    state_name = pw.CharField(max_length=255, null=True)
    zip_code = pw.CharField(max_length=50, null=True)
    country = pw.CharField(max_length=255, null=True)
    employment_type = pw.CharField(max_length=100, null=True)
    duration = pw.CharField(max_length=255, null=True)
    start_date = pw.CharField(max_length=64, null=True)
    end_date = pw.CharField(max_length=64, null=True)
    posting_date = pw.CharField(max_length=64, null=True)
    pay_frequency = pw.CharField(max_length=100, null=True)
    min_pay_rate = pw.DoubleField(null=True)
    max_pay_rate = pw.DoubleField(null=True)
    pay_rate_currency = pw.CharField(max_length=16, null=True)
    status = pw.CharField(max_length=100, null=True)

    class Meta:
        table_name = "jobs"
        indexes = tenant_indexes(unique=("source_id", "number"))
