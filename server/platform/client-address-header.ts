/**
 * The request header through which the web process tells the routes who the client is. The web
 * process sets it on every request (replacing whatever a client sent under that name), so no
 * route ever reads an address a client chose.
 */
export const CLIENT_ADDRESS_HEADER = 'x-vouch-client-address';
