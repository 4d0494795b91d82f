/** The service's name: the default table name, the log and metrics `service`, stack resource prefixes. */
export const SERVICE_NAME = "vancetope-memory";
