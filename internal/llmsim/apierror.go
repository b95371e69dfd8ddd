package llmsim

import (
	"fmt"
	"net/http"
)

// apiError is an error answered in OpenAI's error format.
type apiError struct {
	status  int
	message string
	param   string
	code    string
}

// badRequest returns a 400 error about the request field param ("" for
// none).
func badRequest(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...), param: param}
}

// unavailable returns a 503 error for a request the server could not finish.
func unavailable(err error) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, message: err.Error()}
}

// faultError returns the error that the fault named name answers with
// status; a 429 carries OpenAI's rate-limit code.
func faultError(name string, status int) *apiError {
	e := &apiError{status: status, message: "llmsim injected fault " + name + ": " + http.StatusText(status)}
	if status == http.StatusTooManyRequests {
		e.code = "rate_limit_exceeded"
	}
	return e
}

// errorBody is OpenAI's error object.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// body returns e as {"error":{"message","type","param","code"}}.
func (e *apiError) body() errorBody {
	var b errorBody
	b.Error.Message = e.message
	switch {
	case e.status >= 500:
		b.Error.Type = "server_error"
	case e.status == http.StatusTooManyRequests:
		b.Error.Type = "requests" // OpenAI's type for request-rate limits
	default:
		b.Error.Type = "invalid_request_error"
	}
	if e.param != "" {
		b.Error.Param = &e.param
	}
	if e.code != "" {
		b.Error.Code = &e.code
	}
	return b
}

// write sends e's body with its status.
func (e *apiError) write(w http.ResponseWriter) {
	writeJSON(w, e.status, e.body())
}
