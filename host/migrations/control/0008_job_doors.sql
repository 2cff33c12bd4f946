-- Which endpoint an asynchronous http call came through ('open' or 'secure'): its status is
-- answered only on the status path of that endpoint (a secure call's result is never readable
-- without the instance's credential). NULL (rows written before) answers on neither.
ALTER TABLE extension_jobs ADD COLUMN door TEXT;
