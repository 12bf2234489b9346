-- records_modified indexed the modified_date column, which no read uses: a query or an
-- orderBy on modifiedDate reads the field from the record's JSON (records-page.ts), as
-- every other field, and the plans of both stores show this index never chosen. Every
-- record written paid for its entry. The column stays, written as before.
DROP INDEX records_modified;
