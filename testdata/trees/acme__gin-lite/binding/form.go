package binding

import (
	"errors"
	"net/http"
	"reflect"
	"strconv"
)

type formBinding struct{}

func (formBinding) Name() string {
	return "form"
}

func (formBinding) Bind(req *http.Request, obj any) error {
	if err := req.ParseForm(); err != nil {
		return err
	}
	if err := mapForm(obj, req.Form); err != nil {
		return err
	}
	return validate(obj)
}

// mapForm copies form values into the struct fields tagged with `form:"name"`.
func mapForm(ptr any, form map[string][]string) error {
	value := reflect.ValueOf(ptr)
	if value.Kind() != reflect.Pointer || value.Elem().Kind() != reflect.Struct {
		return errors.New("binding: form target must be a pointer to a struct")
	}
	value = value.Elem()
	typ := value.Type()
	for i := 0; i < typ.NumField(); i++ {
		field := typ.Field(i)
		name := field.Tag.Get("form")
		if name == "" || name == "-" {
			continue
		}
		values, ok := form[name]
		if !ok || len(values) == 0 {
			continue
		}
		if err := setWithProperType(values, value.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

func setWithProperType(values []string, field reflect.Value) error {
	switch field.Kind() {
	case reflect.Slice:
		slice := reflect.MakeSlice(field.Type(), len(values), len(values))
		for i, v := range values {
			if err := setWithProperType([]string{v}, slice.Index(i)); err != nil {
				return err
			}
		}
		field.Set(slice)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return err
		}
		field.SetInt(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(values[0])
		if err != nil {
			return err
		}
		field.SetBool(b)
	default:
		field.SetString(values[0])
	}
	return nil
}

func validate(obj any) error {
	value := reflect.Indirect(reflect.ValueOf(obj))
	if value.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < value.NumField(); i++ {
		if value.Type().Field(i).Tag.Get("binding") == "required" && value.Field(i).IsZero() {
			return errors.New("binding: required field " + value.Type().Field(i).Name + " is empty")
		}
	}
	return nil
}