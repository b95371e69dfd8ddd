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

// write sends e as {"error":{"message","type","param","code"}}.
func (e *apiError) write(w http.ResponseWriter) {
	kind := "invalid_request_error"
	if e.status >= 500 {
		kind = "server_error"
	}
	var param *string
	if e.param != "" {
		param = &e.param
	}
	body := struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}{}
	body.Error.Message, body.Error.Type, body.Error.Param = e.message, kind, param
	writeJSON(w, e.status, body)
}
