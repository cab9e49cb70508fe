/** What the password rules ask (server/identity checks them; forms show this as the hint). */
export const PASSWORD_HINT =
  "At least 12 characters with three of: lower case, upper case, digits, symbols (or 20 characters of anything); not containing the username; at least 5 different characters; not a common password.";
